"""Two sets of runs compared point by point: what `jostle compare` and `jostle baseline check`
compute, and the report's comparison section draws (docs/statistics.md).

A point is matched by benchmark, parameters, ranks, nodes and metric; the runs of one side
with the same point are repetitions (separate MPI jobs). Per point, the log of the chosen
statistic of each run; the difference of the two sides' means is a log slowdown, oriented by
the metric (jostle.records.benchmarks.metric: a latency that grows, a bandwidth that shrinks, is
slower). Its interval uses the variance between runs (moderated over the sweep, stats.py),
its verdict comes from a Benjamini-Hochberg selection over every compared point.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field

from ..records import benchmarks
from . import stats
from ..errors import UsageError
from ..records.results import STATS
from ..sizes import human
from .. import lazy
np = lazy.module("numpy")
pd = lazy.module("pandas")

STATISTICS = ("median", "mean", "min", "p25", "p75", "p99", "max")
VERDICTS = ("slower", "undecided", "faster", "same")   # the table's order: the worst first
METHOD = ("Benjamini-Hochberg at q = {q} over {m} points (false discovery rate); intervals of "
          "the log ratio by Student's t with the variance between runs moderated over the sweep "
          "(Smyth 2004); selected points' intervals at the false-coverage level {sel:.4f} "
          "(Benjamini-Yekutieli 2005)")
# What a point carries besides its parameters (results.py's columns and ours).
_NOT_PARAMS = {"metric", "unit", "n", "ci95_lo", "ci95_hi", "converged", "elapsed_s", "run",
               "benchmark", "digest", "rep", *STATS}


_STAT_COLUMNS = {"metric", "unit", "n", "ci95_lo", "ci95_hi", *STATS}


def machine_facts(meta: dict) -> dict:
    """What names the kind of machine a run was made on (a baseline's key)."""
    m = meta.get("machine") or {}
    mpi = (meta.get("mpi") or {}).get("library") or ""
    return {"cpu": m.get("cpu"), "cores": m.get("cores"), "numa_nodes": m.get("numa_nodes"),
            "mpi": mpi.split(",")[0].strip() or None,
            "nics": sorted(f"{n.get('name')}@{n.get('link_gbps')}" for n in m.get("nics") or [])}


def machine_key(facts: dict) -> str:
    nics = ",".join(facts.get("nics") or []) or "no NIC"
    return (f"{facts.get('cpu')} | {facts.get('cores')} cores | {facts.get('numa_nodes')} NUMA | "
            f"{facts.get('mpi')} | {nics}")


def machine_differences(a: dict, b: dict) -> list:
    return [f"{k}: {a.get(k)} vs {b.get(k)}" for k in ("cpu", "cores", "numa_nodes", "mpi", "nics")
            if a.get(k) != b.get(k)]


@dataclass
class Points:
    """One side: every run's points (a row per run, point and metric) and its machine."""
    label: str
    frame: pd.DataFrame
    machine: dict
    runs: int
    missing: list = field(default_factory=list)   # planned runs never completed


def _digest(run) -> str:
    text = json.dumps(run.meta, sort_keys=True) + run.points.to_csv()
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def points_of(runs, label, missing=()) -> Points:
    """RUNS (results.Run) as one side; its machine is the first run's (mixed machines refused)."""
    parts = []
    facts = None
    for r in runs:
        f = machine_facts(r.meta)
        if facts is None:
            facts = f
        elif machine_differences(facts, f):
            raise UsageError(f"{label}: its runs were made on different machines "
                             f"({'; '.join(machine_differences(facts, f))}); compare one machine at a time")
        if r.points.empty:
            continue
        mpi = r.meta.get("mpi") or {}
        # the run's parameters and the statistics; not what describes a point's shape (modes,
        # extra percentiles, samples), which would otherwise be taken for parameters
        keep = [col for col in r.points.columns
                if col in r.param_names or col in _STAT_COLUMNS]
        parts.append(r.points[keep].assign(benchmark=r.benchmark, run=str(r.path),
                                           digest=_digest(r), ranks=mpi.get("ranks"),
                                           nodes=len(set(r.hosts)) or None))
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return Points(label, frame, facts or {}, len(runs), list(missing))


def param_columns(frame) -> list:
    return [c for c in frame.columns if c not in _NOT_PARAMS]


def conditions(a: pd.DataFrame, b: pd.DataFrame) -> dict:
    """Parameters that hold one value on each side and differ: what is compared (the state of
    the buffers, a placement), left out of the match. {name: (a's value, b's value)}."""
    out = {}
    for c in set(param_columns(a)) & set(param_columns(b)):
        va, vb = a[c].dropna().unique(), b[c].dropna().unique()
        if len(va) == 1 and len(vb) == 1 and va[0] != vb[0]:
            out[c] = (va[0], vb[0])
    return out


def _keyed(frame, params) -> pd.DataFrame:
    def key(row):
        return json.dumps({p: row[p] for p in params if p in row and _present(row[p])},
                          sort_keys=True, default=str)
    out = frame.copy()
    out["point"] = [key(r) for r in out.to_dict("records")]
    return out


def _present(v) -> bool:
    return not (v is None or (isinstance(v, float) and math.isnan(v)))


def _within_se2(rows, statistic) -> np.ndarray:
    """Each run's own variance of its log statistic: from its interval of the median, or the
    mean's standard error; 0 where the record says nothing."""
    v = rows[statistic].to_numpy(float)
    if statistic == "median":
        lo, hi = rows["ci95_lo"].to_numpy(float), rows["ci95_hi"].to_numpy(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            se = (np.log(hi) - np.log(lo)) / (2 * stats.t_quantile(0.975, math.inf))
    elif statistic == "mean":
        with np.errstate(divide="ignore", invalid="ignore"):
            se = rows["stddev"].to_numpy(float) / np.sqrt(rows["n"].to_numpy(float)) / v
    else:
        se = np.zeros(len(v))
    se = np.where(np.isfinite(se), se, 0.0)
    return se * se


def _sides(frame, statistic):
    """{(benchmark, metric, point): (Side, the sorted digests of its runs, a row)}. Repeats
    inside one run (a contention run's `rep`) are one job's draws: their median is the run's."""
    out = {}
    for (bench, metric, point), rows in frame.groupby(["benchmark", "metric", "point"], sort=False):
        first = rows.iloc[0]
        if rows["run"].duplicated().any():
            se2 = pd.Series(_within_se2(rows, statistic), index=rows.index)
            rows = rows.assign(_se2=se2).groupby("run", sort=False).agg(
                {statistic: "median", "_se2": "median", "digest": "first"})
            within = rows["_se2"].to_numpy(float)
        else:
            within = _within_se2(rows, statistic)
        vals = rows[statistic].to_numpy(float)
        if not np.all(np.isfinite(vals) & (vals > 0)):
            out[(bench, metric, point)] = None      # a zero or missing value has no ratio
            continue
        out[(bench, metric, point)] = (stats.Side(np.log(vals), within),
                                       tuple(sorted(rows["digest"])), first)
    return out


def _priors(sides) -> dict:
    """Per (benchmark, metric): Smyth's prior of the variances between runs over the sweep."""
    groups = {}
    for (bench, metric, _), s in sides.items():
        if s and s[0].runs >= 2:
            groups.setdefault((bench, metric), []).append((s[0].sample_variance(), s[0].runs - 1))
    return {g: stats.variance_prior([v for v, _ in vd], [d for _, d in vd])
            for g, vd in groups.items()}


def _moderated(side, prior):
    if side.runs < 2:
        return (math.nan, 0.0)
    return stats.moderate(side.sample_variance(), side.runs - 1, prior)


@dataclass
class Comparison:
    rows: pd.DataFrame        # one per compared point (see compare())
    only_a: list              # points one side lacks: "benchmark metric {params}"
    only_b: list
    not_compared: list        # matched points with a zero or missing value
    conditions: dict
    method: str
    tolerance: float
    statistic: str
    machines: tuple
    jobs_note: str

    def counts(self) -> dict:
        return {v: int((self.rows["verdict"] == v).sum()) for v in VERDICTS}

    @property
    def slower(self) -> bool:
        return bool((self.rows["verdict"] == "slower").any())


def compare(a: Points, b: Points, statistic="median", tolerance=0.05, q=0.05, level=0.95,
            metrics=None, job_sd=stats.JOB_SD_DEFAULT) -> Comparison:
    """Every point both sides have, with its slowdown of B against A, interval and verdict."""
    if statistic not in STATISTICS:
        raise UsageError(f"--statistic '{statistic}' is not allowed; allowed: {', '.join(STATISTICS)}")
    for side in (a, b):
        if side.frame.empty:
            raise UsageError(f"{side.label}: its runs hold no point to compare")
    known = sorted(set(a.frame["metric"]) | set(b.frame["metric"]))
    for m in metrics or ():
        if m not in known:
            raise UsageError(f"--metric '{m}' is not a metric of these runs; allowed: {', '.join(known)}")
    fa, fb = (s.frame[s.frame["metric"].isin(metrics)] if metrics else s.frame for s in (a, b))
    cond = conditions(fa, fb)
    params = [p for p in sorted(set(param_columns(fa)) | set(param_columns(fb))) if p not in cond]
    sa, sb = _sides(_keyed(fa, params), statistic), _sides(_keyed(fb, params), statistic)
    shared = [k for k in sa if k in sb]
    if not shared:
        raise UsageError(f"{a.label} and {b.label} share no point (benchmark, parameters, "
                         f"ranks, nodes and metric); nothing to compare")
    pa, pb = _priors(sa), _priors(sb)
    band = math.log1p(tolerance)
    recs, not_compared = [], []
    for k in shared:
        if sa[k] is None or sb[k] is None:
            not_compared.append(_name(k))
            continue
        (ya, da, row), (yb, db, _) = sa[k], sb[k]
        diff = stats.log_difference(ya, yb, _moderated(ya, pa.get(k[:2])),
                                    _moderated(yb, pb.get(k[:2])), job_sd=job_sd, exact=da == db)
        better = benchmarks.metric(k[0], k[1])["better"] if _known_metric(k) else "lower"
        sign = 1 if better == "lower" else -1
        recs.append({"benchmark": k[0], "metric": k[1], "unit": row["unit"], "better": better,
                     "params": json.loads(k[2]), "size": json.loads(k[2]).get("size"),
                     "a": math.exp(float(np.mean(ya.logs))), "b": math.exp(float(np.mean(yb.logs))),
                     "runs_a": ya.runs, "runs_b": yb.runs, "jobs": diff.jobs, "_diff": diff,
                     "_sign": sign})
    if not recs:
        raise UsageError(f"{a.label} and {b.label}: every shared point has a zero or missing "
                         f"{statistic}; nothing to compare")
    rows = _verdicts(recs, band, q, level)
    only_a = sorted(_name(k) for k in sa if k not in sb)
    only_b = sorted(_name(k) for k in sb if k not in sa)
    sel = stats.fcr_level(q, int(rows["selected"].sum()), len(rows), level)
    jobs = set(rows["jobs"])
    note = ("the same runs on both sides: the comparison is exact" if jobs == {"exact"} else
            "job-to-job variation measured from the runs of both sides" if jobs == {"measured"} else
            "job-to-job variation measured on one side only (its runs), assumed the same on the other"
            if "one side" in jobs and "default" not in jobs else
            f"one run per side: job-to-job variation NOT measured; a default of "
            f"{job_sd:.0%} (standard deviation between jobs) is assumed (docs/statistics.md)")
    return Comparison(rows, only_a, only_b, sorted(not_compared), cond,
                      METHOD.format(q=q, m=len(rows), sel=sel), tolerance, statistic,
                      (a.machine, b.machine), note)


def _known_metric(k) -> bool:
    try:
        benchmarks.metric(k[0], k[1])
        return True
    except KeyError:
        return False


def _name(k) -> str:
    params = json.loads(k[2])
    return f"{k[0]} {k[1]} " + " ".join(f"{p}={v}" for p, v in params.items())


def _more_runs(diff, band, r):
    n = stats.runs_needed(diff, band)
    return None if n is None else max(n, r["runs_a"] + 1, r["runs_b"] + 1)


def _verdicts(recs, band, q, level) -> pd.DataFrame:
    diffs = [r["_diff"] for r in recs]
    p = [d.p_outside(band) for d in diffs]
    selected, padj, n_sel = stats.bh(p, q)
    sel_level = stats.fcr_level(q, n_sel, len(recs), level)
    out = []
    for r, d, pi, pa, s in zip(recs, diffs, p, padj, selected):
        sign = r.pop("_sign")
        r.pop("_diff")
        lo, hi = d.interval(level)
        slo, shi = d.interval(sel_level)
        # oriented: > 1 means B is worse (slower); the ratio B/A is the raw one
        lo, hi, slo, shi = ((lo, hi, slo, shi) if sign > 0 else (-hi, -lo, -shi, -slo))
        dd = sign * d.d
        if s:
            verdict = "slower" if dd > 0 else "faster"
        elif -band <= lo and hi <= band:
            verdict = "same"
        else:
            verdict = "undecided"
        r.update(ratio=r["b"] / r["a"], slowdown=math.exp(dd), lo=math.exp(lo), hi=math.exp(hi),
                 sel_lo=math.exp(slo), sel_hi=math.exp(shi), p=pi, p_adj=float(pa),
                 selected=bool(s), df=d.df, verdict=verdict,
                 runs_needed=_more_runs(d, band, r) if verdict == "undecided" else None)
        out.append(r)
    return pd.DataFrame(out)


def load_side(path, label, allow_incomplete=False) -> Points:
    """A campaign folder or a run file as one side; bad input is a UsageError (exit 2)."""
    import warnings
    from pathlib import Path
    from ..records.results import IncompleteRunError, IncompleteRunWarning, load
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{label} '{path}' does not exist; expected a campaign folder or a "
                         ".jsonl run file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IncompleteRunWarning)
            runs = load([p], allow_incomplete=allow_incomplete)
    except IncompleteRunError as e:
        raise UsageError(f"{label}: {e}") from None
    missing = _planned_missing(p, runs) if p.is_dir() else []
    if missing and not allow_incomplete:
        raise UsageError(f"{label} '{path}' is an incomplete campaign: {len(missing)} planned "
                         f"run(s) never completed ({', '.join(missing[:3])}"
                         f"{', …' if len(missing) > 3 else ''}); pass --allow-incomplete to "
                         "compare what is there")
    return points_of(runs, f"{label} ({path})", missing)


def _planned_missing(folder, runs) -> list:
    """Runs the campaign's manifest plans that have no complete file."""
    from pathlib import Path
    man = Path(folder) / "campaign.json"
    try:
        names = [x["name"] for x in json.loads(man.read_text())["runs"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    have = {r.name for r in runs if r.complete}
    return [n for n in dict.fromkeys(names) if n not in have]


def where(params, skip=()) -> str:
    """{'size': 4194304, 'mode': 'pingpong'} -> '4 MiB mode=pingpong' (the size first); the
    parameters SKIP (said once for every point) left out."""
    size = params.get("size")
    label = human(size) if isinstance(size, int) else ""
    parts = [label + (" B" if label.isdigit() else "")] if label and "size" not in skip else []
    return " ".join(parts + [f"{k}={v}" for k, v in params.items()
                             if k != "size" and k not in skip])


def common_params(rows) -> dict:
    """The parameters every compared point has with one value (said once, in a header)."""
    params = list(rows["params"]) if len(rows) else []
    if not params:
        return {}
    first = params[0]
    return {k: v for k, v in first.items() if k != "size" and all(p.get(k) == v for p in params)}


def point_text(r, skip=()) -> str:
    text = (f"{r['benchmark']} {r['metric']} {where(r['params'], skip)}: ×{r['slowdown']:.3f} "
            f"[{r['lo']:.3f}, {r['hi']:.3f}]")
    if r["verdict"] == "undecided":
        n = r["runs_needed"]
        text += (f" (about {int(n)} runs per side would decide)" if n is not None and n == n
                 else " (more than 100 runs per side would be needed)")
    return text


# -- Baselines: one side kept as a file (docs/records.md, "Baselines") ---------------------

_KEPT = ("n", "min", "p25", "median", "p75", "p99", "max", "mean", "stddev")


def _plain(v):
    """A number as JSON keeps it readably: 6 significant digits; NaN as null."""
    if isinstance(v, (float, np.floating)):
        return None if not math.isfinite(v) else float(f"{float(v):.6g}")
    return v.item() if isinstance(v, np.generic) else v


def to_records(points: Points) -> dict:
    """POINTS as a baseline's machine entry: its machine, runs and points."""
    f = points.frame
    runs = list(dict.fromkeys(f["run"]))
    params = param_columns(f)
    rows = []
    for r in f.to_dict("records"):
        row = {"run": runs.index(r["run"]), "benchmark": r["benchmark"], "metric": r["metric"],
               "unit": r["unit"],
               "params": {p: _plain(r[p]) for p in params if p in r and _present(r[p])}}
        row.update({s: _plain(r[s]) for s in _KEPT if s in r})
        row["ci95"] = [_plain(r["ci95_lo"]), _plain(r["ci95_hi"])]
        rows.append(row)
    digests = dict(zip(f["run"], f["digest"]))
    return {"key": machine_key(points.machine), "machine": points.machine,
            "runs": [{"file": str(r), "digest": digests[r]} for r in runs], "points": rows}


def from_records(entry: dict, label: str) -> Points:
    runs = entry["runs"]
    rows = []
    for p in entry["points"]:
        row = dict(p["params"])
        row.update(benchmark=p["benchmark"], metric=p["metric"], unit=p["unit"],
                   run=runs[p["run"]]["file"], digest=runs[p["run"]]["digest"])
        row.update({s: math.nan if p.get(s) is None else p[s] for s in _KEPT})
        lo, hi = p.get("ci95") or (None, None)
        row.update(ci95_lo=math.nan if lo is None else lo, ci95_hi=math.nan if hi is None else hi)
        rows.append(row)
    return Points(label, pd.DataFrame(rows), entry["machine"], len(runs))
