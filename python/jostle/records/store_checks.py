"""A `jostle check` record (the check's spool: one JSON file per check, docs/records.md, "Check
records") as a store document: the check is a run (kind `check`, benchmark `check`), each
value it measured a point (its metric the value's name, its `median` the value), with the
reference and the tolerance it was judged against and whether it failed (`flagged`). A value
that is not a number (a NIC's state) or was not measured (null) is left out; a check that
measured nothing (skipped before measuring) is a run with no point.
"""

from __future__ import annotations

import json
import math

from . import store_keys

BENCHMARK = "check"
NIC_PREFIX = "nic:"
FAILED = {"fail", "failed", "unhealthy", "bad", "false"}


def is_check(obj) -> bool:
    return isinstance(obj, dict) and obj.get("type") == "check" and "node" in obj


def _values(obj) -> list:
    """The measured values, each {name, value, unit, reference, tolerance, …}, whether the
    record lists them or keys them by name."""
    vals = obj.get("values", obj.get("checks", []))
    if isinstance(vals, dict):
        vals = [{"name": k, **(v if isinstance(v, dict) else {"value": v})}
                for k, v in vals.items()]
    if not isinstance(vals, list):
        raise ValueError("its values are neither a list nor an object")
    return [v for v in vals if isinstance(v, dict)]


def _num(v):
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _failed(v) -> bool:
    verdict = v.get("verdict", v.get("status", v.get("ok")))
    if isinstance(verdict, bool):
        return not verdict
    return str(verdict).lower() in FAILED


def nics_of(obj: dict) -> list:
    """The NICs a check judged ({name, state, speed_mbps, reference, ok}): their state is not a
    number, so it is kept beside the points, in the run's meta."""
    out = []
    for v in _values(obj):
        name = str(v.get("name") or "")
        if not (name.startswith(NIC_PREFIX) or name == NIC_PREFIX[:-1]) or \
                v.get("value") is None:
            continue     # not a NIC, or not looked at (the check ended before)
        text = str(v.get("value") or "").split()
        speed = next((float(w) for w in text[1:2] if _isnum(w)), None)
        out.append({"name": name[len(NIC_PREFIX):] or "-", "state": text[0] if text else "missing",
                    "speed_mbps": speed, "reference": v.get("reference"),
                    "ok": not _failed(v)})
    return out


def _isnum(w: str) -> bool:
    try:
        return math.isfinite(float(w))
    except ValueError:
        return False


def wanted(q) -> bool:
    """Whether a selection Q (store.Query) takes checks' verdicts: not when it names other
    benchmarks, or metrics or sizes (values, not checks)."""
    return (not q.benchmarks or BENCHMARK in q.benchmarks) and not q.metrics and not q.sizes


def runs_of_checks(st, q) -> list:
    """Every check run of the store ST that Q's nodes, classes and times select (a check that
    measured nothing, skipped or timed out, included): dicts of uid, node, class, time,
    verdict and meta (parsed), in time order."""
    from . import store
    sql, params = ["kind = ?"], ["check"]
    for col, values in (("node", q.nodes), ("class", q.classes)):
        if values and not store.patterned(values):
            sql.append(f"{col} IN ({', '.join('?' * len(values))})")
            params.extend(values)
    for op, t in ((">=", q.since), ("<=", q.until)):
        if t:
            sql.append(f"time {op} ?")
            params.append(t)
    rows = st._exec("SELECT uid, node, class, time, verdict, meta, name FROM jostle_runs WHERE "
                    f"{' AND '.join(sql)} ORDER BY time, id", params).fetchall()
    out = [dict(zip(("uid", "node", "class", "time", "verdict", "meta", "name"), r))
           for r in rows]
    for r in out:
        r["meta"] = json.loads(r["meta"]) if r["meta"] else {}
    return store.glob_filter(out, q)


def runs_from_docs(docs, q) -> list:
    """runs_of_checks for documents not in a store (a check record exported straight)."""
    from . import store
    out = [{"uid": d["uid"], "node": d["node"], "class": d.get("class"), "time": d["time"],
            "verdict": d.get("verdict"), "meta": d.get("meta") or {}, "name": d["name"]}
           for d in docs if d.get("kind") == "check"]
    out = [r for r in out if (not q.nodes or store.patterned(q.nodes) or r["node"] in q.nodes)
           and (not q.classes or store.patterned(q.classes) or r["class"] in q.classes)
           and (not q.since or r["time"] >= q.since) and (not q.until or r["time"] <= q.until)]
    out.sort(key=lambda r: (r["time"], r["uid"]))
    return store.glob_filter(out, q)


def check_doc(obj: dict, path, cls=None) -> dict:
    """The store document of check record OBJ (read from PATH)."""
    node = str(obj["node"])
    start = store_keys.utc(obj.get("time") or obj.get("start") or obj.get("end"))
    points = []
    for v in _values(obj):
        name = v.get("name") or v.get("check") or v.get("metric")
        value = _num(v.get("value", v.get("median")))
        if not name or value is None:
            continue    # not measured (skipped, timed out): nothing to keep
        ci = v.get("ci95") if isinstance(v.get("ci95"), list) and len(v["ci95"]) == 2 \
            else [None, None]
        params = v.get("params") if isinstance(v.get("params"), dict) else {}
        size = params.get("size", v.get("size"))
        points.append({"benchmark": BENCHMARK, "metric": str(name),
                       "unit": v.get("unit"), "params": params,
                       "size": _num(size), "n": v.get("n") if isinstance(v.get("n"), int) else None,
                       "median": value, "ci95_lo": _num(ci[0]), "ci95_hi": _num(ci[1]),
                       "reference": _num(v.get("reference")),
                       "tolerance": _num(v.get("tolerance")),
                       "flagged": _failed(v)})
    canonical = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
    meta = {k: obj[k] for k in ("schema", "tool", "version", "site", "end", "duration_s",
                                "budget_s", "timeout_s", "exit_status", "reason", "checks_run",
                                "notes", "load", "options", "baseline", "slurm", "unfinished")
            if k in obj}
    nics = nics_of(obj)
    if nics:
        meta["nics"] = nics
    return {"uid": "check-" + store_keys.digest(canonical), "kind": "check",
            "campaign": obj.get("campaign") or "checks",
            "name": f"check-{node}-{start}", "benchmark": BENCHMARK, "node": node,
            "class": obj.get("class") or cls, "time": start,
            "verdict": str(obj.get("verdict") or obj.get("status") or "") or None,
            "machine": obj.get("machine"), "environment": obj.get("environment"),
            # the check names its MPI library as a string; a run's mpi is an object
            "mpi": {"library": obj["mpi"]} if isinstance(obj.get("mpi"), str) else obj.get("mpi"),
            "meta": meta, "source": str(path), "points": points}
