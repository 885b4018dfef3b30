"""What the points of a set of runs say about their own measurement, for the report's warnings:
one line per study and kind, with counts and the worst point named, never one line per point
nor the same line once per run (docs/statistics.md, "Convergence and the clock").

A study is the runs of one setting: the K MPI jobs NAME-r1 … NAME-rK of `--runs K` are one.
The kinds: points that did not converge (their interval stayed wider than the precision asked
for), points that are resolution-limited (the clock's tick alone keeps it wider: said apart,
with the tick), and points with two or more modes.
"""

from __future__ import annotations

from .. import lazy, units
from ..records.repeats import setting
from ..records.run_meta import multimodal_points

np = lazy.module("numpy")


def _count(n: int) -> str:
    """2 253, as the report writes counts."""
    return units.number(n, digits=len(str(abs(int(n)))))


def _distinct(run, df):
    """DF's rows one per point of RUN (the lines of a point's metrics are one point)."""
    key = [c for c in run.param_names if c in df]
    return df.drop_duplicates(key) if key else df


def _flag(df, column, value):
    return df[column].map(lambda v: v is value or v == value) if column in df else None


def _tick_ns(runs) -> str:
    """The clock's tick as the runs' meta lines give it: '29 ns', '20-29 ns' or ''."""
    ticks = sorted({float(t) for r in runs
                    if (t := (r.meta.get("harness") or {}).get("timer_resolution_s"))})
    if not ticks:
        return ""
    lo, hi = f"{ticks[0] * 1e9:.3g}", f"{ticks[-1] * 1e9:.3g}"
    return f"{lo} ns" if lo == hi else f"{lo}-{hi} ns"


def _where(row, several, run) -> str:
    return units.where(row) + (f" in {run.name}" if several else "")


def study_warnings(name: str, runs: list) -> list:
    """The lines of one study (RUNS of one setting, NAME)."""
    total = 0
    unconv, limited, multi = [], [], []   # (run, its rows)
    for r in runs:
        df = r.points
        if df.empty:
            continue
        total += len(_distinct(r, df))
        lim = _flag(df, "resolution_limited", True)
        if lim is not None and lim.any():
            limited.append((r, _distinct(r, df[lim])))
        bad = _flag(df, "converged", False)
        if bad is not None:
            bad = bad & ~lim if lim is not None else bad
            if bad.any():
                unconv.append((r, _distinct(r, df[bad])))
        m = multimodal_points(r)
        if len(m):
            multi.append((r, m))
    several = len(runs) > 1
    of = f" of {_count(total)}"
    out = []
    if unconv:
        n = sum(len(d) for _, d in unconv)
        worst = None
        for r, d in unconv:
            half = ((d["ci95_hi"] - d["ci95_lo"]) / 2 / d["median"].abs()).replace(np.inf, np.nan)
            if half.notna().any() and (worst is None or half.max() > worst[0]):
                worst = (half.max(), d.loc[half.idxmax()], r)
        at = (f" (worst ±{worst[0]:.0%}{_where(worst[1], several, worst[2])})" if worst else "")
        out.append(f"{name}: {_count(n)}{of} point(s) did not converge{at}: their 95% interval "
                   "stayed wider than the target precision")
    if limited:
        n = sum(len(d) for _, d in limited)
        worst = None
        for r, d in limited:
            if "tick" not in d:
                continue
            rel = (d["tick"].astype(float) / 2 / d["median"].abs()).replace(np.inf, np.nan)
            if rel.notna().any() and (worst is None or rel.max() > worst[0]):
                worst = (rel.max(), d.loc[rel.idxmax()], r)
        tick = _tick_ns([r for r, _ in limited])
        clock = f" at the clock's {tick} tick" if tick else ""
        at = (f"; worst ±{worst[0]:.1%} from the tick alone{_where(worst[1], several, worst[2])}"
              if worst else "")
        out.append(f"{name}: {_count(n)}{of} point(s) resolution-limited{clock}{at}: half a "
                   "tick exceeds the target precision (more operations per sample: "
                   "--sample-reps auto, --min-sample-ticks)")
    if multi:
        n = sum(len(d) for _, d in multi)
        r, d = multi[0]
        first = d.iloc[0]
        at = " and ".join(units.number(a) for a in first["modes_at"] or [])
        out.append(f"{name}: {_count(n)}{of} point(s) have two or more modes ({at} "
                   f"{first['unit']}{_where(first, several, r)}): the median lies between them; "
                   "the modes are in the record")
    return out


def point_warnings(runs) -> list:
    """Every study's lines, in the order of each study's first run."""
    studies = {}
    for r in runs:
        studies.setdefault(setting(r.name), []).append(r)
    return [line for name, rs in studies.items() for line in study_warnings(name, rs)]


def run_warnings(runs) -> list:
    """The C side's warnings (meta lines), each text once with the runs that gave it."""
    said = {}
    for r in runs:
        for w in r.warnings:
            said.setdefault(w, []).append(r.name)
    out = []
    for w, names in said.items():
        who = names[0] if len(names) == 1 else (
            f"{', '.join(names[:2])} and {len(names) - 2} more" if len(names) > 3
            else ", ".join(names))
        out.append(f"{who}: {w}")
    return out

