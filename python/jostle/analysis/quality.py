"""What the points of a set of runs say about their own measurement, for the report's warnings:
one line per benchmark and kind, with counts and the worst point named, never one line per
point nor the same line once per run or setting (docs/statistics.md, "Convergence and the
clock"); where a benchmark ran several settings, each setting's own line is the line's detail.

A setting is one study: the K MPI jobs NAME-r1 … NAME-rK of `--runs K` are one.
The kinds: points that did not converge (their interval stayed wider than the precision asked
for), points that are resolution-limited (the clock's tick alone keeps it wider: said apart,
with the tick), and points with two or more modes.
"""

from __future__ import annotations

from typing import NamedTuple

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


class Line(NamedTuple):
    """A warning of the report: its TEXT, and the DETAILS it stands for (lines of its own)."""
    text: str
    details: tuple = ()


def study_warnings(name: str, runs: list) -> dict:
    """{kind: line} of RUNS under NAME (a setting's jobs, or a benchmark's settings), the
    kinds in the order unconverged, limited, modes."""
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
    out = {}
    if unconv:
        n = sum(len(d) for _, d in unconv)
        worst = None
        for r, d in unconv:
            half = ((d["ci95_hi"] - d["ci95_lo"]) / 2 / d["median"].abs()).replace(np.inf, np.nan)
            if half.notna().any() and (worst is None or half.max() > worst[0]):
                worst = (half.max(), d.loc[half.idxmax()], r)
        at = (f" (worst ±{worst[0]:.0%}{_where(worst[1], several, worst[2])})" if worst else "")
        out["unconverged"] = (f"{name}: {_count(n)}{of} point(s) did not converge{at}: their 95% "
                              "interval stayed wider than the target precision")
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
        out["limited"] = (f"{name}: {_count(n)}{of} point(s) resolution-limited{clock}{at}: half "
                          "a tick exceeds the target precision (more operations per sample: "
                          "--sample-reps auto, --min-sample-ticks)")
    if multi:
        n = sum(len(d) for _, d in multi)
        r, d = multi[0]
        first = d.iloc[0]
        at = " and ".join(units.number(a) for a in first["modes_at"] or [])
        out["modes"] = (f"{name}: {_count(n)}{of} point(s) have two or more modes ({at} "
                        f"{first['unit']}{_where(first, several, r)}): the median lies between "
                        "them; the modes are in the record")
    return out


def point_warnings(runs) -> list:
    """[Line] per benchmark and kind, in the order of each benchmark's first run: a benchmark of
    one setting says it under the setting's name; one of several (`jostle run`'s eight overlap
    settings) once for all of them, the worst run named, and where two or more settings have the
    kind, each one's line in its details."""
    benches = {}
    for r in runs:
        benches.setdefault(r.benchmark, {}).setdefault(setting(r.name), []).append(r)
    out = []
    for bench, studies in benches.items():
        if len(studies) == 1:
            ((name, rs),) = studies.items()
            out += [Line(line) for line in study_warnings(name, rs).values()]
            continue
        whole = study_warnings(f"{bench} ({len(studies)} settings)",
                               [r for rs in studies.values() for r in rs])
        each = [study_warnings(name, rs) for name, rs in studies.items()]
        for kind, line in whole.items():
            details = tuple(e[kind] for e in each if kind in e)
            out.append(Line(line, details if len(details) > 1 else ()))   # one: the line names it
    return out


def run_warnings(runs) -> list:
    """[Line] of the C side's warnings (meta lines), each text once with the runs that gave
    it."""
    said = {}
    for r in runs:
        for w in r.warnings:
            said.setdefault(w, []).append(r.name)
    out = []
    for w, names in said.items():
        who = names[0] if len(names) == 1 else (
            f"{', '.join(names[:2])} and {len(names) - 2} more" if len(names) > 3
            else ", ".join(names))
        out.append(Line(f"{who}: {w}"))
    return out



# What a warning of the C side says about the machine rather than the measurement: a fact of
# the host the run could not change (issue 49: neutral notes, one line each, never red).
MACHINE_FACTS = ("oversubscribed", "NUMA node", "near and far are the same", "wait idle",
                 "share a host", "is on one host", "not this system", "could not be bound")


def is_machine_note(text: str) -> bool:
    return any(f in text for f in MACHINE_FACTS)


def split_run_warnings(runs) -> tuple:
    """(warnings, notes): the C side's lines (run_warnings) about the measurement, and those
    about the machine."""
    lines = run_warnings(runs)
    return ([x for x in lines if not is_machine_note(x.text)],
            [x for x in lines if is_machine_note(x.text)])
