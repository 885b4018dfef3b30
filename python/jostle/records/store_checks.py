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

from . import store_keys as u

BENCHMARK = "check"
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


def check_doc(obj: dict, path, cls=None) -> dict:
    """The store document of check record OBJ (read from PATH)."""
    node = str(obj["node"])
    start = u.utc(obj.get("time") or obj.get("start") or obj.get("end"))
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
                                "notes", "load", "options", "baseline", "slurm") if k in obj}
    return {"uid": "check-" + u.digest(canonical), "kind": "check",
            "campaign": obj.get("campaign") or "checks",
            "name": f"check-{node}-{start}", "benchmark": BENCHMARK, "node": node,
            "class": obj.get("class") or cls, "time": start,
            "verdict": str(obj.get("verdict") or obj.get("status") or "") or None,
            "machine": obj.get("machine"), "environment": obj.get("environment"),
            # the check names its MPI library as a string; a run's mpi is an object
            "mpi": {"library": obj["mpi"]} if isinstance(obj.get("mpi"), str) else obj.get("mpi"),
            "meta": meta, "source": str(path), "points": points}
