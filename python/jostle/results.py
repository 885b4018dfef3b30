"""Load and validate jostle-bench run files (docs/records.md) into pandas.

A run file is one `meta` line, `point` lines, one `end` line. Anything else is
an error that names file:line; a run that did not finish is refused unless the
caller asks for it (allow_incomplete), so that no figure is silently partial.
"""

import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pandas as pd

from . import SCHEMA
from .errors import JostleError, UsageError

STATS = ("min", "p25", "median", "p75", "p99", "max", "mean", "stddev")
# What a point line must carry for anything downstream to draw it.
_POINT_REQUIRED = {"params": dict, "metric": str, "unit": str, "n": int, "median": (int, float)}
_META_TYPED = {"benchmark": str, "hosts": list, "mpi": dict, "machine": dict,
               "warnings": list, "binding": dict, "options": dict, "harness": dict,
               "argv": list}
PARTIAL_SUFFIX = ".partial"
# Columns of the points frame that are not params; a param of the same name gets 'param_'.
_RESERVED = {"metric", "unit", "n", "ci95_lo", "ci95_hi", "converged", "elapsed_s",
             "run", "benchmark", "modes", "modes_at", "modes_share", "samples_offset",
             "samples_count", *STATS}
SAMPLES_DTYPE = "<f8"   # --keep-samples: little-endian binary64 (docs/records.md, "Samples")


def percentile_column(key) -> str:
    """A point's percentile key ("99.9") as its frame column ("p99.9")."""
    return f"p{key}"


class RecordError(JostleError):
    """A file that is not a valid run file: malformed line, unknown schema, bad field."""


class IncompleteRunError(JostleError):
    """A run that did not finish: .partial name, no end line, truncated, status != ok."""

    def __init__(self, path, points, reason):
        self.path, self.points, self.reason = Path(path), points, reason
        super().__init__(
            f"{path} is incomplete ({reason}); it holds {points} point line(s). "
            "Pass --allow-incomplete to use it anyway.")


class IncompleteRunWarning(UserWarning):
    pass


@dataclass
class Run:
    path: Path
    meta: dict
    points: pd.DataFrame
    end: Optional[dict]
    complete: bool = True
    problem: str = ""            # why it is incomplete, empty when complete
    param_names: list = field(default_factory=list)
    launch: Optional[dict] = None  # the sidecar <run>.launch.json, when present

    @property
    def name(self) -> str:
        n = self.path.name
        if n.endswith(PARTIAL_SUFFIX):
            n = n[: -len(PARTIAL_SUFFIX)]
        return n[: -len(".jsonl")] if n.endswith(".jsonl") else n

    @property
    def benchmark(self) -> str:
        return self.meta.get("benchmark", "?")

    @property
    def hosts(self) -> list:
        return list(self.meta.get("hosts") or [])

    @property
    def warnings(self) -> list:
        return [str(w) for w in self.meta.get("warnings") or []]

    def samples_path(self) -> Optional[Path]:
        """The --keep-samples file beside the run file, or None when the run kept none."""
        name = ((self.meta.get("harness") or {}).get("samples") or {}).get("file")
        if not name:
            return None
        suffix = PARTIAL_SUFFIX if self.path.name.endswith(PARTIAL_SUFFIX) else ""
        return self.path.with_name(Path(name).name + suffix)

    def samples(self, index):
        """Every sample of the point line at frame row INDEX, in the order measured (numpy
        float64), or None when that line kept none."""
        import numpy as np
        row = self.points.loc[index]
        off = row.get("samples_offset")
        if off is None or (isinstance(off, float) and math.isnan(off)):
            return None
        path, count = self.samples_path(), int(row["samples_count"])
        if path is None:
            raise RecordError(f"{self.path}: point lines name samples but the meta line names "
                              "no samples file")
        try:
            x = np.fromfile(path, dtype=SAMPLES_DTYPE, count=count, offset=int(off))
        except OSError as e:
            raise JostleError(f"cannot read samples file {path}: {e.strerror}") from None
        if len(x) != count:
            raise RecordError(f"{path}: {count} samples expected at byte {int(off)}, the file "
                              f"holds {len(x)} there (truncated?)")
        return x.astype(float)


def _fail(path, lineno, msg):
    raise RecordError(f"{path}:{lineno}: {msg}")


def _check_meta(path, rec):
    schema = rec.get("schema")
    if schema != SCHEMA:
        _fail(path, 1, f"unknown schema {schema!r}: this jostle reads schema {SCHEMA} "
                       "(a newer jostle-bench? update the Python package)")
    for key, typ in _META_TYPED.items():
        if key in rec and not isinstance(rec[key], typ):
            _fail(path, 1, f"meta.{key} should be {typ.__name__}, got {type(rec[key]).__name__}")
    if "benchmark" not in rec:
        _fail(path, 1, "meta line has no 'benchmark'")


def _number(v):
    """JSON number or null -> float (null, e.g. stddev of one sample, becomes NaN)."""
    return math.nan if v is None else float(v)


def _point_row(path, lineno, rec):
    for key, typ in _POINT_REQUIRED.items():
        if key not in rec:
            _fail(path, lineno, f"point line has no '{key}'")
        if not isinstance(rec[key], typ) or isinstance(rec[key], bool):
            _fail(path, lineno, f"point.{key} has the wrong type ({rec[key]!r})")
    row = {}
    for k, v in rec["params"].items():
        row[k if k not in _RESERVED else f"param_{k}"] = v
    row.update(metric=rec["metric"], unit=rec["unit"], n=rec["n"])
    for s in STATS:
        v = rec.get(s)
        if v is not None and not isinstance(v, (int, float)):
            _fail(path, lineno, f"point.{s} should be a number, got {v!r}")
        row[s] = _number(v)
    ci = rec.get("ci95")
    if ci is not None and not (isinstance(ci, list) and len(ci) == 2):
        _fail(path, lineno, f"point.ci95 should be [lo, hi], got {ci!r}")
    row["ci95_lo"], row["ci95_hi"] = (_number(ci[0]), _number(ci[1])) if ci else (math.nan, math.nan)
    row["converged"] = rec.get("converged")
    row["elapsed_s"] = _number(rec.get("elapsed_s"))
    modes = rec.get("modes")
    if modes is not None and not (isinstance(modes, list) and all(
            isinstance(m, dict) and isinstance(m.get("at"), (int, float))
            and isinstance(m.get("share"), (int, float)) for m in modes)):
        _fail(path, lineno, f"point.modes should be a list of {{at, share}}, got {modes!r}")
    # one mode unless the line lists several (too few samples to tell reads as one)
    row["modes"] = len(modes) if modes else 1
    row["modes_at"] = [float(m["at"]) for m in modes] if modes else None
    row["modes_share"] = [float(m["share"]) for m in modes] if modes else None
    pct = rec.get("percentiles")
    if pct is not None:
        if not isinstance(pct, dict):
            _fail(path, lineno, f"point.percentiles should be an object, got {pct!r}")
        for k, v in pct.items():
            row[percentile_column(k)] = _number(v)
    smp = rec.get("samples")
    if smp is not None:
        if not (isinstance(smp, dict) and isinstance(smp.get("offset"), int)
                and isinstance(smp.get("count"), int)):
            _fail(path, lineno, f"point.samples should be {{offset, count}}, got {smp!r}")
        row["samples_offset"], row["samples_count"] = smp["offset"], smp["count"]
    return row, list(rec["params"])


def load_run(path, allow_incomplete: bool = False) -> Run:
    """Read one .jsonl (or .jsonl.partial) file; see the module docstring."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise JostleError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise RecordError(f"{path} is not a jostle record file: byte {e.start} is not UTF-8 "
                          "text (JSON Lines expected)") from None
    lines = text.split("\n")
    # A file ends with '\n'; a last line without one was cut mid-write.
    truncated = bool(lines and lines[-1] != "")
    if not truncated:
        lines.pop()
    meta, end, rows, problem, param_keys = None, None, [], "", []
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            if truncated and i == len(lines):
                problem = f"its last line {i} was cut mid-write"
                break
            _fail(path, i, f"not valid JSON ({e.msg} at column {e.colno})")
        if not isinstance(rec, dict) or "type" not in rec:
            _fail(path, i, "a record must be a JSON object with a 'type'")
        if end is not None:
            _fail(path, i, "a record follows the 'end' line")
        kind = rec["type"]
        if meta is None and kind != "meta":
            _fail(path, i, f"the first record must be 'meta', got {kind!r}")
        if kind == "meta":
            if meta is not None:
                _fail(path, i, "a second 'meta' line")
            _check_meta(path, rec)
            meta = rec
        elif kind == "point":
            row, names = _point_row(path, i, rec)
            rows.append(row)
            param_keys.extend(n if n not in _RESERVED else f"param_{n}" for n in names)
        elif kind == "end":
            if not isinstance(rec.get("status"), str):
                _fail(path, i, "end line has no 'status'")
            end = rec
        else:
            _fail(path, i, f"unknown record type {kind!r} (expected meta, point or end)")
    if meta is None:
        if problem:
            raise IncompleteRunError(path, 0, problem)
        _fail(path, 1, "empty file: no 'meta' line")
    if end is not None and isinstance(end.get("points"), int) and end["points"] != len(rows):
        _fail(path, len(lines), f"end line counts {end['points']} points but the file holds {len(rows)}")

    if not problem:
        if end is None:
            problem = "no 'end' line: the run was cut short"
        elif end["status"] != "ok":
            msg = f": {end['message']}" if end.get("message") else ""
            problem = f"its end status is '{end['status']}'{msg}"
        elif path.name.endswith(PARTIAL_SUFFIX):
            problem = "it still has its .partial name"
    if problem:
        if not allow_incomplete:
            raise IncompleteRunError(path, len(rows), problem)
        warnings.warn(f"{path} is incomplete ({problem}); using its {len(rows)} point line(s)",
                      IncompleteRunWarning, stacklevel=2)

    points = pd.DataFrame(rows)
    params = list(dict.fromkeys(param_keys))
    run = Run(path, meta, points, end, complete=not problem, problem=problem, param_names=params)
    run.launch = _read_sidecar(path)
    return run


def sidecar_path(path) -> Path:
    """results/c/x.jsonl[.partial] -> results/c/x.launch.json"""
    p = Path(path)
    name = p.name.removesuffix(PARTIAL_SUFFIX).removesuffix(".jsonl")
    return p.with_name(name + ".launch.json")


def _read_sidecar(path):
    side = sidecar_path(path)
    try:
        return json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def find_run_files(root) -> list:
    """Every run file under ROOT; x.jsonl.partial is skipped when x.jsonl exists."""
    root = Path(root)
    found = sorted(set(root.rglob("*.jsonl")) | set(root.rglob("*.jsonl" + PARTIAL_SUFFIX)))
    names = {str(p) for p in found}
    return [p for p in found
            if not (p.name.endswith(PARTIAL_SUFFIX) and str(p)[: -len(PARTIAL_SUFFIX)] in names)]


def load(paths, allow_incomplete: bool = False) -> list:
    """Load files and directories (recursively) into a list of Run, in path order."""
    runs = []
    for p in [Path(x) for x in paths]:
        if p.is_dir():
            files = find_run_files(p)
            if not files:
                raise UsageError(f"'{p}' holds no .jsonl run file; expected a campaign "
                                 "directory with runs in it, or .jsonl files")
            runs.extend(load_run(f, allow_incomplete) for f in files)
        elif p.exists():
            runs.append(load_run(p, allow_incomplete))
        else:
            raise JostleError(f"{p}: no such file or directory")
    return runs


def one_row_per_point(run) -> pd.DataFrame:
    """RUN's points, one row each (their first metric's line): what is said of a point's
    samples (modes, convergence) is said once."""
    df = run.points
    if df.empty:
        return df
    return df.drop_duplicates([c for c in run.param_names if c in df] or None)


def multimodal_points(run) -> pd.DataFrame:
    """The points of RUN whose samples have two or more modes, one row each."""
    df = one_row_per_point(run)
    return df[df["modes"] > 1] if "modes" in df else df.iloc[0:0]


def frame(runs) -> pd.DataFrame:
    """All points of RUNS in one frame, with a 'run' column (the run's name)."""
    parts = [r.points.assign(run=r.name, benchmark=r.benchmark) for r in runs if len(r.points)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
