"""What goes into the results store: a run file, a scan's runs, a check's record, each as one
document (a dict: the run's columns and its points, store_schema.py), found under folders.

A document's `uid` is the digest of its record (the bytes of a run file, the canonical JSON of a
check record), so the same run found twice, in two folders or in the spool and its campaign, is
one run in the store. Only complete runs are added (results.scan's judgement): a `.partial` run,
or one whose end is not `ok`, is left for its campaign to finish and said so.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Optional

from ..errors import JostleError
from . import results, store, store_checks, store_schema, store_spool
from .store_keys import digest, utc

# Meta keys kept whole beside the columns; the binding (a line per rank) and the per-host
# environments stay in the record file.
_META_KEPT = ("schema", "tool", "version", "git", "benchmark", "argv", "start", "hosts",
              "compiler", "options", "harness", "warnings", "slurm", "launch_line", "buffers",
              "flows", "counters", "simulated")


def node_of(meta: dict, name: str) -> str:
    """The node a run measured: a scan's fingerprint run names it (fp-BENCHMARK-HOST, as the
    scan named the host), otherwise its ranks' hosts (several joined by commas)."""
    bench = str(meta.get("benchmark", ""))
    stem = name.removesuffix("-again")
    if stem.startswith(f"fp-{bench}-") and len(stem) > len(f"fp-{bench}-"):
        return stem[len(f"fp-{bench}-"):]
    hosts = list(dict.fromkeys(str(h) for h in meta.get("hosts") or []))
    return ",".join(sorted(hosts)) if hosts else "unknown"


def run_doc(path, campaign=None, cls=None) -> dict:
    """The document of a complete run file; IncompleteRunError or RecordError otherwise."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise JostleError(f"cannot read {path}: {e.strerror}") from None
    meta, _rows, _end, problem, _keys = results.scan(path)
    if problem:
        raise results.IncompleteRunError(path, len(_rows), problem)
    try:
        start = utc(meta.get("start"))
    except ValueError:
        raise results.RecordError(f"{path}:1: meta.start is not an ISO 8601 time: "
                                  f"{meta.get('start')!r}") from None
    name = path.name.removesuffix(".jsonl")
    points = []
    for line in raw.decode("utf-8").split("\n"):
        if not line.strip():
            continue
        rec = results.parse_line(line)
        if rec.get("type") != "point":
            continue
        ci = rec.get("ci95") or [None, None]
        size = rec["params"].get("size")
        points.append({
            "metric": rec["metric"], "unit": rec["unit"], "params": rec["params"],
            "size": float(size) if isinstance(size, (int, float)) and not isinstance(size, bool)
            else None,
            **{k: rec.get(k) for k in ("n", *results.STATS, "converged")},
            "ci95_lo": ci[0], "ci95_hi": ci[1]})
    # the name too: a scan's fingerprint names its node (two nodes' runs alike to the byte
    # are two runs); a copy of the file elsewhere, same name, is the same run
    return {"uid": "run-" + digest(name.encode() + b"\0" + raw), "kind": "run",
            "campaign": campaign if campaign is not None else path.parent.name,
            "name": name, "benchmark": str(meta["benchmark"]), "node": node_of(meta, name),
            "class": cls, "time": start, "verdict": None,
            "machine": meta.get("machine"), "environment": meta.get("environment"),
            "mpi": meta.get("mpi"), "meta": {k: meta[k] for k in _META_KEPT if k in meta},
            "source": str(path), "points": points}


def unreadable(why: str) -> bool:
    """Whether a reason FOUND.skipped gives is a file or folder that could not be read."""
    return why.startswith(("cannot be read", "a folder that cannot be read"))


class Found:
    """What a walk of the folders found: documents to add, spooled documents (with their
    files), and what was left out and why."""

    def __init__(self):
        self.docs, self.spooled, self.skipped = [], [], []
        self.spool_keys = {}     # {path of a spooled file: the spool key of its store, or ""}

    def uids(self) -> set:
        return {d["uid"] for d in self.docs} | {d["uid"] for _, d in self.spooled}


def _json_file(path: Path, found: Found, cls):
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        found.skipped.append((path, f"cannot be read: {e.strerror or e}"))
        return
    except UnicodeDecodeError:
        return     # not one of ours (another tool's binary): not a record
    try:
        obj = json.loads(text)
    except ValueError:
        return     # not one of ours (another tool's, a half-written one): not a record
    if store_spool.is_spooled(obj):
        found.spooled.append((path, obj["doc"]))
        found.spool_keys[str(path)] = store_spool.store_of(obj)
    elif store_checks.is_check(obj):
        try:
            found.docs.append(store_checks.check_doc(obj, path, cls))
        except (ValueError, KeyError, TypeError) as e:
            found.skipped.append((path, f"not a valid check record ({e})"))


def _ours(name: str) -> bool:
    return name.endswith((".jsonl", ".jsonl.partial")) or name.endswith(".json")


def _walk(root: Path, found: Found) -> list:
    """The record files under ROOT, sorted; a folder that cannot be listed and a file that is
    not there to read (a broken link) go to FOUND.skipped, named. A hidden folder (a check's
    runs, being measured, under its spool) is not looked in."""
    out = []

    def cannot(e: OSError):
        found.skipped.append((Path(e.filename or root), "a folder that cannot be read: "
                              f"{e.strerror or e}"))
    seen = set()
    for top, dirs, names in os.walk(root, onerror=cannot, followlinks=True):
        real = os.path.realpath(top)
        if real in seen:         # a link back up the tree: walked once
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for n in names:
            f = Path(top) / n
            if not _ours(n):
                continue
            try:
                st = f.stat()
            except FileNotFoundError:
                found.skipped.append((f, "cannot be read: a link to nothing"))
                continue
            except OSError as e:
                found.skipped.append((f, f"cannot be read: {e.strerror or e}"))
                continue
            if stat.S_ISREG(st.st_mode):
                out.append(f)
    return sorted(out)


def find(paths, campaign=None, cls=None) -> Found:
    """Every run file, check record and spooled document under PATHS (files or folders,
    recursively). CAMPAIGN: the campaign of every run (default: its folder's name); CLS: the
    class of the runs that do not say theirs."""
    found = Found()
    for p in map(Path, paths):
        if not p.exists():
            raise JostleError(f"{p}: no such file or directory")
        files = [p] if p.is_file() else _walk(p, found)
        runs = set(results.find_run_files(p)) if p.is_dir() else None
        for f in files:
            if f.name.endswith(".jsonl.partial") or f.name.endswith(".jsonl"):
                if runs is not None and f not in runs:
                    continue     # a .partial beside its complete run
                try:
                    with open(f, "rb"):
                        pass
                except OSError as e:
                    found.skipped.append((f, f"cannot be read: {e.strerror or e}"))
                    continue
                try:
                    found.docs.append(run_doc(f, campaign, cls))
                except results.IncompleteRunError as e:
                    found.skipped.append((f, f"incomplete ({e.reason})"))
                except JostleError as e:
                    found.skipped.append((f, str(e)))
            elif f.suffix == ".json" and not f.name.startswith("."):
                _json_file(f, found, cls)
    seen, docs = set(), []
    for d in found.docs:            # one run found twice (a folder and a file in it)
        if d["uid"] not in seen:
            seen.add(d["uid"])
            docs.append(d)
    found.docs = docs
    return found


def rows_from_docs(docs, q: Optional[store.Query] = None) -> list:
    """The rows Store.points would give for DOCS once added (a run exported straight from its
    records, without a store), Q applied."""
    q = q or store.Query()
    out = []
    for d in docs:
        run = {"uid": d["uid"], "kind": d["kind"], "campaign": d.get("campaign"),
               "name": d["name"], "node": d["node"], "class": d.get("class"), "time": d["time"],
               "verdict": d.get("verdict"), "machine": d.get("machine") or {},
               "mpi": d.get("mpi") or {}, "run_benchmark": d["benchmark"]}
        for p in d.get("points", ()):
            row = {**run, **{c: p.get(c) for c in store_schema.POINT_COLUMNS}}
            row["benchmark"] = p.get("benchmark") or d["benchmark"]
            row["params"] = p.get("params") or {}
            out.append(row)

    def keep(r):
        return all((not vals or store.patterned(vals) or r[col] in vals) for col, vals in (
            ("node", q.nodes), ("class", q.classes), ("metric", q.metrics),
            ("benchmark", q.benchmarks), ("kind", q.kinds), ("campaign", q.campaigns))) and \
            (not q.sizes or r["size"] in {float(s) for s in q.sizes}) and \
            (not q.since or r["time"] >= q.since) and (not q.until or r["time"] <= q.until)
    out.sort(key=lambda r: (r["time"], r["uid"]))
    return store.glob_filter([r for r in out if keep(r)], q)
