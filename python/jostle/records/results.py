"""Load and validate jostle-bench run files (docs/records.md) into pandas.

A run file is one `meta` line, `point` lines, one `end` line. Anything else is
an error that names file:line; a run that did not finish is refused unless the
caller asks for it (allow_incomplete), so that no figure is silently partial.
"""

from __future__ import annotations

import copy
import json
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .. import SCHEMA
from ..errors import JostleError, UsageError
from .run_meta import RunMetadata
from .sidecar import PARTIAL_SUFFIX, read_sidecar
from .. import lazy
np = lazy.module("numpy")
pd = lazy.module("pandas")

STATS = ("min", "p25", "median", "p75", "p99", "max", "mean", "stddev")
_ORDERED = ("min", "p25", "median", "p75", "p99", "max")   # quantiles, never decreasing
# What a point line must carry for anything downstream to draw it.
_POINT_REQUIRED = {"params": dict, "metric": str, "unit": str, "n": int, "median": (int, float)}
_META_TYPED = {"benchmark": str, "hosts": list, "mpi": dict, "machine": dict,
               "warnings": list, "binding": dict, "options": dict, "harness": dict,
               "argv": list, "start": str}
# Bounds of what a reader accepts (jostle-bench's own lines are far inside them): a line of a
# 1024-rank meta is ~0.3 MiB, its deepest object 5 levels.
MAX_LINE = 16 << 20
MAX_DEPTH = 32
END_STATUSES = ("ok", "interrupted", "error")
# Params the figures compute with: numbers ≥ 0 (jostle-bench writes them so, src/bench/).
NUMERIC_PARAMS = ("size", "compute_cores", "rep", "ai", "order", "recipients", "segment", "tile",
                  "window", "workers")
# Columns of the points frame that are not params; a param of the same name gets 'param_'.
_RESERVED = {"metric", "unit", "n", "ci95_lo", "ci95_hi", "converged", "elapsed_s",
             "run", "benchmark", "modes", "modes_at", "modes_share", "samples_offset",
             "samples_count", "resolution_limited", "tick", "reps_per_sample", "levels_median",
             "levels_share", "stop", *STATS}
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
class Run(RunMetadata):
    path: Path
    meta: dict
    points: pd.DataFrame
    end: Optional[dict]
    complete: bool = True
    problem: str = ""            # why it is incomplete, empty when complete
    param_names: list = field(default_factory=list)
    launch: Optional[dict] = None  # the sidecar <run>.launch.json, when present
    jobs: int = 1                # MPI jobs it pools (repeats.pool); 1: one run file

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
    def pages(self) -> str:
        """The kind of pages its buffers were asked for (jostle-bench --pages); "system" for runs
        from before the option, which had the system's."""
        return (self.meta.get("harness") or {}).get("pages") or "system"

    @property
    def warnings(self) -> list:
        return [str(w) for w in self.meta.get("warnings") or []]

    @property
    def rows(self) -> list:
        """The points as dicts, one a line (records.lines.Lines has them so, read)."""
        return self.points.to_dict("records")

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
    if schema != SCHEMA or isinstance(schema, bool):
        _fail(path, 1, f"unknown schema {schema!r}: this jostle reads schema {SCHEMA} "
                       "(a newer jostle-bench? update the Python package)")
    for key, typ in _META_TYPED.items():
        if key in rec and not isinstance(rec[key], typ):
            _fail(path, 1, f"meta.{key} should be {typ.__name__}, got {type(rec[key]).__name__}")
    if "benchmark" not in rec:
        _fail(path, 1, "meta line has no 'benchmark'")
    for key in ("argv", "hosts", "warnings"):
        if not all(isinstance(x, str) for x in rec.get(key) or []):
            _fail(path, 1, f"meta.{key} should be a list of strings")
    ranks = (rec.get("mpi") or {}).get("ranks")
    if ranks is not None and not (_is_num(ranks) and isinstance(ranks, int) and ranks >= 1):
        _fail(path, 1, f"meta.mpi.ranks should be a whole number ≥ 1, got {ranks!r}")


def _number(v):
    """JSON number or null -> float (null, e.g. stddev of one sample, becomes NaN)."""
    return math.nan if v is None else float(v)


def _no_constant(name):
    # Python's json takes NaN and Infinity, which JSON has not; jostle-bench writes null.
    raise ValueError(f"{name} is not a JSON number (jostle-bench writes null for an undefined "
                     "value)")


def _finite_float(text):
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"the number {text[:20]}{'…' if len(text) > 20 else ''} is out of range")
    return v


def _bounded_int(text):
    if len(text) > 30:   # far beyond any count; int() of 5 000 digits is refused by Python anyway
        raise ValueError(f"the number {text[:20]}… has {len(text)} digits")
    return int(text)


def _depth(obj, limit) -> int:
    """Nesting depth of OBJ, stopping at LIMIT + 1 (iterative: no recursion to overflow)."""
    stack, deepest = [(obj, 1)], 0
    while stack:
        o, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        kids = o.values() if isinstance(o, dict) else o if isinstance(o, list) else ()
        stack.extend((k, d + 1) for k in kids if isinstance(k, (dict, list)))
    return deepest


# Made once: json.loads with arguments makes a decoder per line, a third of a line's cost.
_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float,
                            parse_int=_bounded_int)


def parse_line(line: str):
    """One record line as JSON, within the reader's bounds; ValueError says what is wrong."""
    if len(line) > MAX_LINE:
        raise ValueError(f"a line of {len(line)} characters (at most {MAX_LINE})")
    try:
        rec = _DECODER.decode(line)
    except json.JSONDecodeError as e:
        raise ValueError(f"not valid JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    # as deep as it has brackets at most (counted in C, a walk costs a quarter of the parse)
    if line.count("[") + line.count("{") > MAX_DEPTH and _depth(rec, MAX_DEPTH) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return rec


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_scalar(v) -> bool:
    return v is None or isinstance(v, (str, bool, int, float))


def _point_row(path, lineno, rec):
    for key, typ in _POINT_REQUIRED.items():
        if key not in rec:
            _fail(path, lineno, f"point line has no '{key}'")
        if not isinstance(rec[key], typ) or isinstance(rec[key], bool):
            _fail(path, lineno, f"point.{key} has the wrong type ({_short(rec[key])})")
    bad = next((k for k, v in rec["params"].items() if not _is_scalar(v)), None)
    if bad is not None:
        _fail(path, lineno, f"point.params.{_short(bad)} should be a string, number, boolean "
                            f"or null, got {_short(rec['params'][bad])}")
    bad = next((k for k in NUMERIC_PARAMS if k in rec["params"]
                and not (_is_num(rec["params"][k]) and rec["params"][k] >= 0)), None)
    if bad is not None:
        _fail(path, lineno, f"point.params.{bad} should be a number ≥ 0, got "
                            f"{_short(rec['params'][bad])}")
    if rec["n"] < 0:
        _fail(path, lineno, f"point.n should be ≥ 0, got {rec['n']}")
    row = {}
    for k, v in rec["params"].items():
        row[k if k not in _RESERVED else f"param_{k}"] = v
    row.update(metric=rec["metric"], unit=rec["unit"], n=rec["n"])
    for s in STATS:
        v = rec.get(s)
        if v is not None and not _is_num(v):
            _fail(path, lineno, f"point.{s} should be a number, got {_short(v)}")
        row[s] = _number(v)
    given = [row[s] for s in _ORDERED if not math.isnan(row[s])]
    if any(b < a for a, b in zip(given, given[1:])):
        _fail(path, lineno, "point's quantiles are out of order (min ≤ p25 ≤ median ≤ p75 ≤ "
                            "p99 ≤ max expected)")
    if not math.isnan(row["stddev"]) and row["stddev"] < 0:
        _fail(path, lineno, f"point.stddev should be ≥ 0, got {row['stddev']}")
    ci = rec.get("ci95")
    if ci is not None and not (isinstance(ci, list) and len(ci) == 2
                               and all(x is None or _is_num(x) for x in ci)):
        _fail(path, lineno, f"point.ci95 should be [lo, hi] (two numbers), got {_short(ci)}")
    row["ci95_lo"], row["ci95_hi"] = (_number(ci[0]), _number(ci[1])) if ci else (math.nan, math.nan)
    if row["ci95_hi"] < row["ci95_lo"]:
        _fail(path, lineno, f"point.ci95 should be [lo, hi] with lo ≤ hi, got {_short(ci)}")
    # stop: why the point stopped; absent (before they existed): not said
    for key, typ, what in (("converged", bool, "true or false"),
                           ("resolution_limited", bool, "true or false"), ("stop", str, "a string")):
        v = row[key] = rec.get(key)
        if v is not None and not isinstance(v, typ):
            _fail(path, lineno, f"point.{key} should be {what}, got {_short(v)}")
    tick = rec.get("tick")
    if tick is not None and not (_is_num(tick) and tick >= 0):
        _fail(path, lineno, f"point.tick should be a number ≥ 0, got {_short(tick)}")
    row["tick"] = _number(tick)
    reps = rec.get("reps_per_sample", 1)   # absent before it existed: one operation a sample
    if not (isinstance(reps, int) and not isinstance(reps, bool) and reps >= 1):
        _fail(path, lineno, f"point.reps_per_sample should be a whole number ≥ 1, got "
                            f"{_short(reps)}")
    row["reps_per_sample"] = reps
    el = rec.get("elapsed_s")
    if el is not None and not (_is_num(el) and el >= 0):
        _fail(path, lineno, f"point.elapsed_s should be a number ≥ 0, got {_short(el)}")
    row["elapsed_s"] = _number(el)
    row["modes_at"], row["modes_share"] = _listed(path, lineno, rec, "modes", ("at", "share"))
    # one mode unless the line lists several (too few samples to tell reads as one)
    row["modes"] = len(row["modes_at"]) if row["modes_at"] else 1
    # a median between two levels: each level's (docs/statistics.md, "Two levels")
    row["levels_median"], row["levels_share"] = _listed(path, lineno, rec, "levels",
                                                        ("median", "share"))
    pct = rec.get("percentiles")
    if pct is not None:
        if not isinstance(pct, dict):
            _fail(path, lineno, f"point.percentiles should be an object, got {_short(pct)}")
        for k, v in pct.items():
            if v is not None and not _is_num(v):
                _fail(path, lineno, f"point.percentiles.{_short(k)} should be a number, got "
                                    f"{_short(v)}")
            row[percentile_column(k)] = _number(v)
    smp = rec.get("samples")
    if smp is not None:
        if not (isinstance(smp, dict) and isinstance(smp.get("offset"), int)
                and isinstance(smp.get("count"), int)):
            _fail(path, lineno, f"point.samples should be {{offset, count}}, got {_short(smp)}")
        row["samples_offset"], row["samples_count"] = smp["offset"], smp["count"]
    return row, list(rec["params"])


def _listed(path, lineno, rec, key, fields) -> list:
    """The point's list KEY of objects of numbers FIELDS, as one list per field (None each
    where the line has none)."""
    v = rec.get(key)
    if v is not None and not (isinstance(v, list) and all(
            isinstance(m, dict) and all(_is_num(m.get(f)) for f in fields) for m in v)):
        _fail(path, lineno, f"point.{key} should be a list of {{{', '.join(fields)}}}, got "
                            f"{_short(v)}")
    return [[float(m[f]) for m in v] if v else None for f in fields]


def _short(v) -> str:
    """A value for a message: repr, cut to one readable line."""
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _check_end(path, lineno, rec):
    if rec.get("status") not in END_STATUSES:
        _fail(path, lineno, f"end.status should be one of {', '.join(END_STATUSES)}, got "
                            f"{_short(rec.get('status'))}")
    for key in ("points", "signal"):
        v = rec.get(key)
        if v is not None and not (_is_num(v) and isinstance(v, int) and v >= 0):
            _fail(path, lineno, f"end.{key} should be a whole number ≥ 0, got {_short(v)}")
    el = rec.get("elapsed_s")
    if el is not None and not (_is_num(el) and el >= 0):
        _fail(path, lineno, f"end.elapsed_s should be a number ≥ 0, got {_short(el)}")
    if rec.get("message") is not None and not isinstance(rec["message"], str):
        _fail(path, lineno, f"end.message should be a string, got {_short(rec['message'])}")


def scan(path):
    """The one judgement of a record file: (meta, point rows, end line or None, why it is
    incomplete or "", the params' column names); a damaged file raises RecordError naming
    its line."""
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
            rec = parse_line(line)
        except ValueError as e:
            if truncated and i == len(lines):
                problem = f"its last line {i} was cut mid-write"
                break
            _fail(path, i, str(e))
        if not isinstance(rec, dict) or "type" not in rec:
            _fail(path, i, "a record must be a JSON object with a 'type'")
        if end is not None:
            _fail(path, i, "a record follows the 'end' line")
        kind = rec["type"]
        if not isinstance(kind, str):
            _fail(path, i, f"a record's 'type' should be a string, got {_short(kind)}")
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
            _check_end(path, i, rec)
            end = rec
        else:
            _fail(path, i, f"unknown record type {_short(kind)} (expected meta, point or end)")
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
    return meta, rows, end, problem, param_keys


_READ: dict = {}   # the last large file's scan(), by its stat: see _scanned
MIN_KEEP = 4 << 20


def _scanned(path):
    """scan(PATH), kept for the next call while the file is unchanged (same inode, size and
    mtime): one command reads a large run several times (a campaign's resume check, its
    analysis, its report), and a 1024-node scan's 65 MB link run took 30 s to read each time.
    Only the last file of MIN_KEEP bytes or more is kept; its rows only ever feed a new
    DataFrame."""
    try:
        st = os.stat(path)
    except OSError:
        return scan(path)
    key = (str(Path(path).resolve()), st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _READ:
        out = scan(path)
        if st.st_size < MIN_KEEP:
            return out
        _READ.clear()
        _READ[key] = out
    meta, rows, end, problem, params = _READ[key]   # the small parts copied: a caller may
    return copy.deepcopy(meta), rows, copy.deepcopy(end), problem, list(params)  # change them


def judged(path, allow_incomplete: bool = False) -> tuple:
    """scan(PATH) as (meta, point rows, end, problem, params), an incomplete run refused
    unless ALLOW_INCOMPLETE (then said in a warning): load_run, and records.lines without
    the DataFrame."""
    meta, rows, end, problem, param_keys = _scanned(path)
    if problem:
        if not allow_incomplete:
            raise IncompleteRunError(path, len(rows), problem)
        warnings.warn(f"{path} is incomplete ({problem}); using its {len(rows)} point line(s)",
                      IncompleteRunWarning, stacklevel=3)
    return meta, rows, end, problem, list(dict.fromkeys(param_keys))


def load_run(path, allow_incomplete: bool = False) -> Run:
    """Read one .jsonl (or .jsonl.partial) file; see the module docstring."""
    path = Path(path)
    meta, rows, end, problem, params = judged(path, allow_incomplete)
    run = Run(path, meta, pd.DataFrame(rows), end, complete=not problem, problem=problem,
              param_names=params)
    run.launch = read_sidecar(path)
    return run


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


def frame(runs) -> pd.DataFrame:
    """All points of RUNS in one frame, with a 'run' column (the run's name)."""
    parts = [r.points.assign(run=r.name, benchmark=r.benchmark) for r in runs if len(r.points)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
