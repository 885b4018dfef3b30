"""jostle's numbers as JSON records POSTed to an HTTP endpoint (a Logstash or Elasticsearch
input, Graylog's HTTP GELF, a site's own collector), one record a request, as ReFrame's
`httpjson` log handler sends its performance records, under its field names where they fit
(docs/history.md, "HTTP JSON").

A record that cannot be sent (the endpoint down, a time-out, a 5xx or 429 answer after
ATTEMPTS tries with a doubling pause) is kept in the spool, a folder with one JSON Lines file
per endpoint holding each pending record once (a record: one value of one run or check,
record_key; exported again while it waits, it is still one copy); the next export to that
endpoint sends what waits first, each record once, and removes the file once all went. An answer 4xx other than 408 and 429 is the
endpoint refusing the record: it is not kept (sending it again would be refused again), and
the export fails naming it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

from .. import __version__
from ..errors import JostleError
from .latest import latest, pooled

ATTEMPTS = 3
PAUSE_S = 0.5
TIMEOUT_S = 10.0
DEFAULT_SPOOL = Path("results") / "export-spool"
RETRIED = {408, 429}


class Refused(JostleError):
    """The endpoint answered that it will not take a record (4xx)."""


def spool_folder(given=None) -> Path:
    return Path(given or os.environ.get("JOSTLE_EXPORT_SPOOL") or DEFAULT_SPOOL)


def record_of(r: dict, system=None) -> dict:
    """One store row (a value of a run or a check) as a JSON record, ReFrame's names first."""
    from ..analysis import history
    better = history.orientation(r["benchmark"], r["metric"], r.get("unit") or "")
    tol = r.get("tolerance")
    lower = -tol if tol is not None and better == "higher" else None
    upper = tol if tol is not None and better == "lower" else None
    judged = r.get("reference") is not None and r.get("flagged") is not None
    check = r["kind"] == "check"
    rec = {
        "check_name": "jostle check" if check else f"jostle {r['benchmark']}",
        "check_system": system, "check_partition": r.get("class"),
        "check_job_nodelist": r["node"].split(","),
        "check_job_completion_time": r["time"],
        "check_perf_var": history.label(r["benchmark"], r["metric"], r.get("params") or {}),
        "check_perf_value": r["median"], "check_perf_unit": r.get("unit"),
        "check_perf_ref": r.get("reference"), "check_perf_lower_thres": lower,
        "check_perf_upper_thres": upper,
        "check_perf_result": ("fail" if r.get("flagged") else "pass") if judged else None,
        "check_result": ({"healthy": "pass", "unhealthy": "fail"}.get(r.get("verdict"))
                         if check else None),
        "hostname": r["node"], "@timestamp": r["time"],
        "facility": "jostle", "data-version": "1.0", "version": __version__,
        "jostle_benchmark": r["benchmark"], "jostle_metric": r["metric"],
        "jostle_params": r.get("params") or {}, "jostle_better": better,
        "jostle_ci95": [r.get("ci95_lo"), r.get("ci95_hi")], "jostle_run": r.get("name"),
        "jostle_campaign": r.get("campaign"), "jostle_verdict": r.get("verdict"),
        "jostle_uid": r["uid"],
    }
    return rec


def records(rows, every=False, system=None) -> list:
    """The records of ROWS: the latest value of each series, or EVERY value selected."""
    return [record_of(r, system) for r in pooled(rows if every else latest(rows))]


def _post(url: str, rec: dict, timeout: float):
    body = json.dumps(rec, sort_keys=True).encode("utf-8")
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "User-Agent": f"jostle/{__version__}"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        resp.read()


def send_one(url, rec, attempts=ATTEMPTS, pause=None, timeout=TIMEOUT_S) -> str:
    """POST REC to URL: "" when sent, else why not (after ATTEMPTS tries, PAUSE (PAUSE_S)
    seconds before the second, doubling). Refused: a 4xx."""
    why = ""
    pause = PAUSE_S if pause is None else pause
    for i in range(attempts):
        try:
            _post(url, rec, timeout)
            return ""
        except urllib.error.HTTPError as e:
            if 400 <= e.code < 500 and e.code not in RETRIED:
                raise Refused(f"{url} refused a record: HTTP {e.code} {e.reason}") from None
            why = f"HTTP {e.code} {e.reason}"
        except (urllib.error.URLError, OSError, socket.timeout) as e:
            why = str(getattr(e, "reason", e))
        if i + 1 < attempts:
            time.sleep(pause * 2 ** i)
    return why


def _spool_name(url: str) -> str:
    return "httpjson-" + hashlib.sha256(url.encode()).hexdigest()[:12]


def spooled(spool: Path, url: str) -> list:
    """The spool files of URL: its one file of pending records, and any an older jostle kept
    (one per export, their names sorting by time), oldest first."""
    if not spool.is_dir():
        return []
    old = sorted(spool.glob(_spool_name(url) + "-*.jsonl"))
    own = spool / f"{_spool_name(url)}.jsonl"
    return old + ([own] if own.exists() else [])


def record_key(rec: dict) -> str:
    """What a record is: one value (node, benchmark, metric, parameters) of one run or check
    (its uid). The same record exported again while it waits is one pending copy."""
    return json.dumps([rec.get("hostname"), rec.get("jostle_benchmark"),
                       rec.get("jostle_metric"), rec.get("jostle_params"),
                       rec.get("jostle_uid")], sort_keys=True, default=str)


def pending(spool: Path, url: str) -> list:
    """The records waiting for URL, each once, oldest first."""
    out = {}
    for path in spooled(spool, url):
        for r in _read_spool(path):
            out.setdefault(record_key(r), r)
    return list(out.values())


def keep(spool: Path, url: str, recs) -> Path:
    """RECS as URL's pending records (its one spool file, written whole, then renamed; the
    files of an older jostle folded into it)."""
    try:
        spool.mkdir(parents=True, exist_ok=True)
        path = spool / f"{_spool_name(url)}.jsonl"
        older = [p for p in spooled(spool, url) if p != path]
        _rewrite(path, url, recs)
        for p in older:
            p.unlink(missing_ok=True)
        return path
    except OSError as e:
        raise JostleError(f"cannot keep the unsent records in the spool {spool}: "
                          f"{e.strerror}") from None


def _read_spool(path: Path) -> list:
    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        try:
            out.append(json.loads(line)["record"])
        except (ValueError, KeyError, TypeError):
            continue
    return out


def send(url: str, recs, spool: Path, attempts=ATTEMPTS, pause=None,
         timeout=TIMEOUT_S) -> dict:
    """Send what waits for URL, then RECS, each record once (a record already waiting is one
    copy, sent once: record_key); what could not go stays in SPOOL, URL's one file (one
    export at a time per endpoint: a lock). {"sent": N (of RECS), "from_spool": M, "spooled":
    K (what waits for URL now), "why": the last failure, or ""}."""
    out = {"sent": 0, "from_spool": 0, "spooled": 0, "why": ""}
    with _locked(spool, url):
        queue = {record_key(r): (r, True) for r in pending(spool, url)}
        for r in recs:
            queue[record_key(r)] = (r, False)
        items = list(queue.values())
        for i, (rec, old) in enumerate(items):
            why = send_one(url, rec, attempts, pause, timeout)
            if why:      # still down: what is left waits, each record once
                keep(spool, url, [r for r, _ in items[i:]])
                out.update(why=why, spooled=len(items) - i)
                return out
            out["from_spool" if old else "sent"] += 1
        for path in spooled(spool, url):
            path.unlink(missing_ok=True)
    return out


def _rewrite(path: Path, url: str, recs):
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text("".join(json.dumps({"url": url, "record": r}, sort_keys=True) + "\n"
                           for r in recs), encoding="utf-8")
    os.replace(tmp, path)


@contextlib.contextmanager
def _locked(spool: Path, url: str):
    """One sender of URL's spool at a time (two exports at once would send a record twice)."""
    try:
        spool.mkdir(parents=True, exist_ok=True)
        f = open(spool / f".{_spool_name(url)}.lock", "w")
    except OSError as e:
        raise JostleError(f"cannot use the spool {spool}: {e.strerror}") from None
    with f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
