"""A scan's fingerprint runs read into values: one per node and metric (FINGERPRINT: what a
node's pingpong, memlat and contention runs measure), one per link and metric (the `shift`
run's directed links), and the same values of a saved scan (baseline_values). Judging them is
verdict.py's."""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

from ... import lazy
from .. import comparison, contention
from ...records.repeats import Z95
from ..working_sets import WORKING_SETS, working_sets

np = lazy.module("numpy")
pd = lazy.module("pandas")




@dataclass(frozen=True)
class NodeMetric:
    name: str
    benchmark: str     # which fingerprint run holds it
    metric: str
    unit: str
    worse: int         # +1: higher is worse
    size: object = None   # the point's message size: bytes, "small" or "large" of the run's, None: any
    phase: str = None  # contention's phase
    degradation: bool = False   # a contention.pairs() degradation, not a point's median
    label: str = ""
    working_set: str = None   # what it depends on (WORKING_SETS): compared only alike


FINGERPRINT = (
    NodeMetric("pingpong_latency", "pingpong", "latency", "us", +1, 8,
               label="intra-node latency at 8 B"),
    NodeMetric("pingpong_bandwidth", "pingpong", "bandwidth", "MB/s", -1, 1 << 20,
               label="intra-node bandwidth at 1 MiB"),
    NodeMetric("memory_latency", "memlat", "latency", "ns", +1,
               label="memory latency: one dependent load, a miss to the node's memory",
               working_set="chain_bytes"),
    NodeMetric("triad", "contention", "compute_throughput", "GB/s", -1, None, "compute",
               label="triad on the compute cores, alone", working_set="array_bytes"),
    NodeMetric("latency_alone", "contention", "latency", "us", +1, "small", "comm",
               label="latency at the small size (4 B) beside idle cores"),
    NodeMetric("latency_under_load", "contention", "latency", "x", +1, "small", degradation=True,
               label="latency at 4 B with every other core computing / alone",
               working_set="array_bytes"),
    NodeMetric("bandwidth_under_load", "contention", "bandwidth", "x", +1, "large",
               degradation=True, label="bandwidth at the large size (64 MiB) alone / under load",
               working_set="array_bytes"),
)


# ---------------------------------------------------------------- tables from records

def _size(points, size):
    if size in ("small", "large") and "size" in points and len(points):
        return points["size"].min() if size == "small" else points["size"].max()
    return size


# A point whose samples sit at two levels or more (its `modes`) is read at its better level
# of at least this share: the node's own speed, undisturbed. On a guest the 1 MiB ping-pong
# sits at 13-15 and at 21-22 GB/s in one launch, in shares that move from launch to launch
# (the median 14.0 in one, 21.3 in the next); a node gone slow is slow at every level.
BEST_LEVEL_SHARE = 0.2


def _level(point, worse) -> float:
    """POINT's value (a row of Run.points): its median, or its better level (of WORSE +1:
    the lower, -1: the higher) when its samples sit at several."""
    at, share = point.get("modes_at"), point.get("modes_share")
    if not isinstance(at, list) or len(at) < 2:
        return float(point["median"])
    levels = [a for a, w in zip(at, share) if w >= BEST_LEVEL_SHARE]
    if not levels:
        return float(point["median"])
    return float(min(levels) if worse > 0 else max(levels))


def _pick(points, metric, size=None, phase=None):
    df = points[points.metric == metric]
    size = _size(points, size)
    if size is not None and "size" in df:
        df = df[df["size"] == size]
    if phase is not None and "phase" in df:
        df = df[df["phase"] == phase]
    return df


def _log_se(lo, hi):
    """The standard errors of values' logs from their 95% intervals [LO, HI] (columns; NaN or
    inf where an interval is not of positive numbers)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(hi.to_numpy(dtype=float) / lo.to_numpy(dtype=float)) / (2 * Z95)


def load_ratio(pairs, metric, size) -> tuple:
    """(ratio, u) of a contention run's PAIRS at SIZE: how many times worse METRIC is under
    load than alone (together / alone for a latency, alone / together for a bandwidth), and
    the standard uncertainty of its log from the two medians' 95% intervals (added in
    quadrature; 0 where a record has none). NaN when the run has no such pair."""
    sel = pairs[(pairs.metric == metric) & (pairs["size"] == size)] \
        if not pairs.empty and "size" in pairs else pairs.iloc[0:0]
    if not len(sel):
        return math.nan, math.nan
    sign = contention.METRICS[metric][1]
    a, t = sel.alone.to_numpy(dtype=float), sel.together.to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = float(np.median(t / a if sign > 0 else a / t))
        u = 0.0
        for side in ("alone", "together"):
            lo, hi = (sel.get(f"{side}_{b}") for b in ("lo", "hi"))
            if lo is not None and hi is not None:
                w = _log_se(lo, hi)
                w = w[np.isfinite(w)]
                u = math.hypot(u, float(np.median(w)) if w.size else 0.0)
    return ratio, u


def value_error(run, m: NodeMetric) -> float:
    """The standard uncertainty of the log of metric M's value in RUN, from its points' 95%
    intervals (a ratio under load: load_ratio's); NaN where they give none. A check's value
    cannot repeat better than this from one check to the next."""
    if run is None:
        return math.nan
    if m.degradation:
        return load_ratio(contention.pairs(run.points, run.param_names), m.metric,
                          _size(run.points, m.size))[1]
    sel = _pick(run.points, m.metric, m.size, m.phase)
    if not len(sel) or "ci95_lo" not in sel:
        return math.nan
    w = _log_se(sel.ci95_lo, sel.ci95_hi)
    w = w[np.isfinite(w) & (w > 0)]      # an interval of one value (a phase's rate) says none
    return float(np.median(w)) if w.size else math.nan


def oversubscribed(run) -> bool:
    """Whether RUN had more bound threads than cores (its records say so): a compute thread
    then shares the communicating thread's core, and a ratio under load is the scheduler's
    time slice (milliseconds, against a microsecond alone), not the node's memory system."""
    return "oversubscribed" in getattr(run, "caveats", ())


def node_values(runs_by_host: dict) -> pd.DataFrame:
    """One row per host, one column per FINGERPRINT metric (NaN where a run is missing, and
    for a ratio under load where the run was oversubscribed), for an under-load ratio
    METRIC_u, the uncertainty of its log, and the working sets its runs measured with
    (chain_bytes, array_bytes: NaN where a run does not say).
    RUNS_BY_HOST: host -> {benchmark: results.Run}."""
    rows = {}
    for host, runs in runs_by_host.items():
        row = {}
        for m in FINGERPRINT:
            run = runs.get(m.benchmark)
            v = math.nan
            if m.degradation:
                v, row[m.name + "_u"] = math.nan, math.nan
                if run is not None and not oversubscribed(run):
                    v, row[m.name + "_u"] = load_ratio(
                        contention.pairs(run.points, run.param_names), m.metric,
                        _size(run.points, m.size))
            elif run is not None:
                sel = _pick(run.points, m.metric, m.size, m.phase)
                v = float(pd.Series([_level(r, m.worse) for _, r in sel.iterrows()]).median()) \
                    if len(sel) else math.nan
            row[m.name] = v
        rows[host] = {**row, **working_sets(runs)}
    cols = [c for m in FINGERPRINT for c in (m.name, *((m.name + "_u",) if m.degradation else ()))]
    cols += list(WORKING_SETS)
    return pd.DataFrame.from_dict(rows, orient="index", columns=cols)


def link_values(run, hosts=None) -> pd.DataFrame:
    """One row per directed link of a shift run: src, dst (hosts), latency at its smallest size,
    bandwidth at its largest. HOSTS: the run's hosts as the scan names them, rank r on HOSTS[r]
    (one rank per host, in order): used when the ranks' own host names are others (an address
    given, a name the node gives itself)."""
    df = run.points
    if hosts is not None and not df.empty and \
            not set(df.src_host) | set(df.dst_host) <= set(hosts) and df.src.max() < len(hosts):
        df = df.assign(src_host=[hosts[int(r)] for r in df.src],
                       dst_host=[hosts[int(r)] for r in df.dst])
    if df.empty:
        return pd.DataFrame(columns=["src", "dst", "latency", "bandwidth"])
    small, large = df["size"].min(), df["size"].max()
    lat = df[(df.metric == "latency") & (df["size"] == small)]
    bw = df[(df.metric == "bandwidth") & (df["size"] == large)]
    out = lat[["src_host", "dst_host", "median"]].rename(columns={"median": "latency"}).merge(
        bw[["src_host", "dst_host", "median"]].rename(columns={"median": "bandwidth"}),
        on=["src_host", "dst_host"], how="outer")
    return out.rename(columns={"src_host": "src", "dst_host": "dst"}).reset_index(drop=True)


def baseline_values(points) -> pd.DataFrame:
    """node_values of the fingerprint runs of a saved scan (comparison.Points, from a baseline
    of `jostle baseline save SCAN-FOLDER`): one row per node it measured, the host from each
    run's file name (fp-BENCHMARK-HOST; the confirmations, -again, left out), its working sets
    as the baseline kept them (NaN: saved before they were kept)."""
    f = points.frame
    by_host = {}
    for run, df in (f.groupby("run", sort=False) if not f.empty else ()):
        bench = str(df.benchmark.iloc[0])
        stem = str(run).rsplit("/", 1)[-1].removesuffix(".jsonl")
        if not stem.startswith(f"fp-{bench}-") or stem.endswith("-again"):
            continue
        df = df.loc[:, df.notna().any()]
        names = [c for c in (*comparison.param_columns(df), "rep") if c in df.columns]
        by_host.setdefault(stem[len(f"fp-{bench}-"):], {})[bench] = \
            SimpleNamespace(points=df.reset_index(drop=True), param_names=names,
                            sets=(points.sets or {}).get(run, {}))
    return node_values(by_host)
