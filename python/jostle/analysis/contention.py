"""Contention analysis: pair each measurement alone with the same one together, and say how much worse.

A contention run (jostle-bench contention) measures every point in phases: `compute` (the
kernel alone), `comm` (the ping-pongs alone) and `together`. A metric measured together is
compared with the same metric, same params except the phase, same `rep`, measured alone:
comm metrics with the `comm` phase, compute metrics with the `compute` phase. Each side of a
pair is that point's median; the degradation is signed so that positive is always worse:

    latency, rtt                      together / alone − 1      (Swartvagher 2021: "doubles")
    bandwidth, compute_throughput,
    compute_traffic, compute_bandwidth,
    compute_flops                     1 − together / alone      (compute slowdown)

With --repeat K the K pairs are summarised by the median of their degradations (and the
range), not by a ratio of averaged sides, so that one slow repetition cannot hide in a mean.
"""

from __future__ import annotations

import math
import re

from .. import lazy
from ..records.repeats import setting
from . import bounds
pd = lazy.module("pandas")


LATENCY_BELOW = 64 << 10      # a row of messages smaller than this shows latency, else bandwidth

# metric -> (phase that measures it alone, +1 if higher is worse, -1 if lower is worse, 0: no sign)
METRICS = {
    "latency": ("comm", +1),
    "rtt": ("comm", +1),
    "bandwidth": ("comm", -1),
    "compute_throughput": ("compute", -1),  # all compute threads / the phase's wall time
    "compute_traffic": ("compute", -1),     # the same with write-allocate reads counted
    "compute_bandwidth": ("compute", -1),   # per sweep and thread
    "compute_flops": ("compute", -1),
    "stalled_fraction": ("compute", 0),   # shown side by side; a fraction has no "slowdown"
}
COMM_METRICS = ("latency", "rtt", "bandwidth")
# Params that identify what is compared; anything else a record adds also has to match.
PHASE, REP = "phase", "rep"
CI = {"median": "", "ci95_lo": "_lo", "ci95_hi": "_hi"}   # point column -> suffix in pairs()
BOUNDS = ("alone_lo", "alone_hi", "together_lo", "together_hi")


def degradation(metric: str, alone: float, together: float) -> float:
    """Fraction by which TOGETHER is worse than ALONE (positive: worse); NaN when undefined."""
    sign = METRICS.get(metric, (None, 0))[1]
    if not sign or not (alone and math.isfinite(alone) and math.isfinite(together)):
        return math.nan
    ratio = together / alone
    return ratio - 1 if sign > 0 else 1 - ratio


def pairs(points: pd.DataFrame, params) -> pd.DataFrame:
    """One row per metric measured both alone and together at the same params and rep.

    POINTS is a run's points frame (results.Run.points), PARAMS its param names. Columns:
    the params except the phase, metric, unit, alone, together, degradation."""
    key = [p for p in params if p != PHASE]
    if points.empty or PHASE not in points:
        return pd.DataFrame(columns=[*key, "metric", "unit", "alone", "together", "degradation"])
    df = points[points.metric.isin(list(METRICS))]
    ci = [c for c in ("ci95_lo", "ci95_hi") if c in df]   # the 95% CI of each median, where the record has it
    cols = [*key, "metric", "unit", "median", *ci]
    alone_phase = df.metric.map(lambda m: METRICS[m][0])
    # One line per (params, metric, phase): a repeated line is a bad file, keep its last.
    alone = df[df[PHASE] == alone_phase][cols].drop_duplicates([*key, "metric"], keep="last")
    together = df[df[PHASE] == "together"][cols].drop_duplicates([*key, "metric"], keep="last")
    out = alone.merge(together.drop(columns="unit"), on=[*key, "metric"],
                      suffixes=("_alone", "_together"))
    out = out.rename(columns={f"{c}_{side}": f"{side}{CI[c]}" for side in ("alone", "together")
                              for c in ("median", *ci)})
    out["degradation"] = [degradation(m, a, t)
                          for m, a, t in zip(out.metric, out.alone, out.together)]
    return out.reset_index(drop=True)


def run_pairs(runs) -> pd.DataFrame:
    """pairs() of every run, with a 'run' column."""
    parts = [pairs(r.points, r.param_names).assign(run=r.name) for r in runs]
    parts = [p for p in parts if not p.empty]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def summary(paired: pd.DataFrame) -> pd.DataFrame:
    """Repetitions folded: median of each side and of the degradations, their range, the count."""
    if paired.empty:
        return paired
    key = [c for c in paired.columns
           if c not in (REP, "alone", "together", "degradation", *BOUNDS)]
    g = paired.groupby(key, sort=False, dropna=False)   # a param absent from a run is NaN
    # Each side's interval over the repetitions: from the lowest bound to the highest.
    bounds = {b: (b, "min" if b.endswith("_lo") else "max") for b in BOUNDS if b in paired}
    return g.agg(alone=("alone", "median"), together=("together", "median"),
                 degradation=("degradation", "median"), deg_min=("degradation", "min"),
                 deg_max=("degradation", "max"), reps=("alone", "size"),
                 **bounds).reset_index()


def run_costs(runs) -> tuple:
    """(start-up and teardown, measuring) in seconds, means over RUNS.

    Measuring is the sum of the elapsed_s of a run's points (one per params: its metric lines
    share it), else the run's own elapsed_s; start-up and teardown is the launcher's wall time
    (NAME.launch.json) less that: MPI start, topology, allocation and first touch of arrays."""
    startup, measuring = [], []
    for r in runs:
        df = r.points
        m = math.nan
        if not df.empty and "elapsed_s" in df and df.elapsed_s.notna().any():
            m = float(df.groupby(r.param_names, dropna=False)["elapsed_s"].max().sum())
        if not math.isfinite(m):
            m = float((r.end or {}).get("elapsed_s") or 0.0)
        wall = (r.launch or {}).get("elapsed_s")
        measuring.append(m)
        startup.append(max(0.0, float(wall) - m) if wall is not None else 0.0)
    n = max(len(runs), 1)
    return sum(startup) / n, sum(measuring) / n


def study_of(run) -> tuple:
    """(study, quick) from the run's name, else from what varies in its points."""
    m = re.match(r"(fig[1-4]|usecases)-", run.name)
    quick = setting(run.name).endswith("-quick")   # setting: without the -rK of --runs K
    if m:
        return m.group(1), quick
    df = run.points
    if "ai" in df and df["ai"].nunique() > 1:
        return "fig4", quick
    if "size" in df and df["size"].nunique() > 2:
        return "fig3", quick
    return "fig1", quick


def _argv_option(run, flag):
    argv = run.meta.get("argv") or []
    return argv[argv.index(flag) + 1] if flag in argv[:-1] else None


def series_of(run, study) -> str:
    if study == "fig2":
        return (f"comm thread {_argv_option(run, '--comm-core') or '?'}, "
                f"data {_argv_option(run, '--comm-mem') or '?'}")
    kernels = run.points["kernel"].dropna().unique() if "kernel" in run.points else []
    nt = "stores" in run.points and (run.points["stores"] == "nt").any()
    flows = run.meta.get("flows")   # --pairs / --comm-threads: who talks is part of the series
    talk = (f", {2 * flows['pairs']} ranks × {max(flows['comm_threads'], 1)} thread(s) talk"
            if flows else "")
    return (", ".join(map(str, kernels)) or "kernel ?") + (" (nt stores)" if nt else "") + talk


def degradation_table(runs):
    """The summary of every pair (summary above) with study and series columns."""
    table = summary(run_pairs(runs))
    if table.empty:
        return table
    info = {r.name: (*study_of(r), series_of(r, study_of(r)[0])) for r in runs}
    table["study"] = [info[n][0] + ("-quick" if info[n][1] else "") for n in table.run]
    table["series"] = [info[n][2] for n in table.run]
    # the node's computing threads and whether their arrays fit its caches (bounds.py)
    node = {r.name: (bounds.node_threads(r), bounds.arrays_in_cache(r)) for r in runs}
    table["node_threads"] = [node[n][0] for n in table.run]
    table["in_cache"] = [node[n][1] for n in table.run]
    return table
