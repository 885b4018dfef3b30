"""Baselines: one side of a comparison kept as a file (docs/records.md, "Baselines"): one
entry per kind of machine and MPI library, each with its runs and points."""

from __future__ import annotations

import math

from .comparison import Points, param_columns, _present
from .machines import machine_key
from ..records.run_meta import short_mpi_name
from .. import lazy
np = lazy.module("numpy")
pd = lazy.module("pandas")

_KEPT = ("n", "min", "p25", "median", "p75", "p99", "max", "mean", "stddev")


def _plain(v):
    """A number as JSON keeps it readably: 6 significant digits; NaN as null."""
    if isinstance(v, (float, np.floating)):
        return None if not math.isfinite(v) else float(f"{float(v):.6g}")
    return v.item() if isinstance(v, np.generic) else v


def to_records(points: Points) -> list:
    """POINTS as a baseline's entries, one per MPI library: its machine, runs and points."""
    return [_entry(points.of_library(lib), points.libraries.get(lib))
            for lib in dict.fromkeys(points.frame["mpi"])]


def _entry(points: Points, library) -> dict:
    f = points.frame
    runs = list(dict.fromkeys(f["run"]))
    params = param_columns(f)
    rows = []
    for r in f.to_dict("records"):
        row = {"run": runs.index(r["run"]), "benchmark": r["benchmark"], "metric": r["metric"],
               "unit": r["unit"],
               # parameters exactly as recorded: a point is matched by them (ai=0.0833333333)
               "params": {p: r[p].item() if isinstance(r[p], np.generic) else r[p]
                          for p in params if p in r and _present(r[p])}}
        row.update({s: _plain(r[s]) for s in _KEPT if s in r})
        row["ci95"] = [_plain(r["ci95_lo"]), _plain(r["ci95_hi"])]
        rows.append(row)
    digests = dict(zip(f["run"], f["digest"]))
    machine = {**points.machine, "mpi": library}
    # each run's working sets, {} where it builds none: a scan judges a node against the
    # saved nodes measured with its own (analysis/scan/working_sets.py)
    return {"key": machine_key(machine), "machine": machine,
            "runs": [{"file": str(r), "digest": digests[r],
                      "working_sets": (points.sets or {}).get(str(r), {})} for r in runs],
            "points": rows}


def from_records(entry: dict, label: str) -> Points:
    """A baseline's entry as one side (its library in column `mpi`)."""
    runs = entry["runs"]
    library = (entry.get("machine") or {}).get("mpi")
    lib = short_mpi_name(library)
    rows = []
    for p in entry["points"]:
        row = dict(p["params"])
        row.update(benchmark=p["benchmark"], metric=p["metric"], unit=p["unit"],
                   run=runs[p["run"]]["file"], digest=runs[p["run"]]["digest"], mpi=lib)
        row.update({s: math.nan if p.get(s) is None else p[s] for s in _KEPT})
        lo, hi = p.get("ci95") or (None, None)
        row.update(ci95_lo=math.nan if lo is None else lo, ci95_hi=math.nan if hi is None else hi)
        rows.append(row)
    machine = {k: v for k, v in (entry.get("machine") or {}).items() if k != "mpi"}
    sets = {r["file"]: r["working_sets"] for r in runs if isinstance(r.get("working_sets"), dict)}
    return Points(label, pd.DataFrame(rows), machine, len(runs), libraries={lib: library},
                  sets=sets if sets or not runs else None)


def joined(sides, label) -> Points:
    """Several entries' sides (one per library) as one side."""
    frame = pd.concat([s.frame for s in sides], ignore_index=True)
    libs = {k: v for s in sides for k, v in s.libraries.items()}
    sets = None if any(s.sets is None for s in sides) else \
        {k: v for s in sides for k, v in s.sets.items()}
    return Points(label, frame, sides[0].machine, sum(s.runs for s in sides), libraries=libs,
                  sets=sets)
