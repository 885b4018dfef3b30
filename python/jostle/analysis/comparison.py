"""Two sets of runs compared point by point: what `jostle compare` and `jostle baseline check`
compute, and the report's comparison section draws (docs/statistics.md).

A point is matched by MPI library, benchmark, parameters, ranks, nodes and metric: a campaign
that holds two libraries (the main job measures Open MPI and MPICH) is judged library by
library, each against its own. The runs of one side with the same point are repetitions
(separate MPI jobs). Per point, the log of the chosen statistic of each run; the difference of
the two sides' means is a log slowdown, oriented by the metric (jostle.benchmarks.metric: a
latency that grows, a bandwidth that shrinks, is slower). Its interval uses the variance
between runs (pooled over both sides and moderated over the sweep, stats.moderate_sweep); the
verdicts come from verdicts.py.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field

from ..records import benchmarks
from . import multiplicity, stats, verdicts, working_sets
from .machines import machine_differences, machine_facts
from ..errors import UsageError
from ..records.results import STATS
from ..records.run_meta import short_mpi_name
from ..sizes import human
from .. import lazy
np = lazy.module("numpy")
pd = lazy.module("pandas")

STATISTICS = ("median", "mean", "min", "p25", "p75", "p99", "max")
VERDICTS = verdicts.VERDICTS
METHOD = ("Benjamini-Hochberg at q = {qp:g} over {m} points (one test per point: metrics "
          "derived from the same samples once) and at q = {qs:g} over {s} sweeps (--fdr {q:g} "
          "shared by the two families); intervals of the log ratio by "
          "Student's t, the variance between runs pooled over both sides and moderated over "
          "the sweep (a robust trend over the size, points beyond it on their own, the prior "
          "never weighing more than a quarter of the point's runs); selected points' intervals at the "
          "false-coverage level {sel:.4f} (Benjamini-Yekutieli 2005); sweeps: Cochran's Q "
          "across the sizes first (p < 0.01: groups of neighbouring sizes, each its own "
          "shift), then the shift common to the sizes, the job as the unit")
# What a point carries besides its parameters (results.py's columns and ours).
_NOT_PARAMS = {"metric", "unit", "n", "ci95_lo", "ci95_hi", "converged", "elapsed_s", "run",
               "benchmark", "digest", "rep", "mpi", *STATS}
_STAT_COLUMNS = {"metric", "unit", "n", "ci95_lo", "ci95_hi", *STATS}
SWEEP_SHARE = 0.2   # of --fdr, for the sweeps' family; the points' family has the rest


@dataclass
class Points:
    """One side: every run's points (a row per run, point and metric, its library in column
    `mpi`), its machine and its libraries ({short name: the library as machine_facts says})."""
    label: str
    frame: pd.DataFrame
    machine: dict
    runs: int
    missing: list = field(default_factory=list)   # planned runs never completed
    libraries: dict = field(default_factory=dict)
    # {run: {chain_bytes, array_bytes}}: the working sets its runs measured with (None: a
    # baseline saved before they were kept)
    sets: "dict | None" = field(default_factory=dict)

    def of_library(self, lib) -> "Points":
        f = self.frame[self.frame["mpi"] == lib] if not self.frame.empty else self.frame
        return Points(self.label, f.reset_index(drop=True), self.machine,
                      f["run"].nunique() if not f.empty else 0, self.missing,
                      {lib: self.libraries.get(lib)}, self.sets)


def _digest(run) -> str:
    text = json.dumps(run.meta, sort_keys=True) + run.points.to_csv()
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def points_of(runs, label, missing=()) -> Points:
    """RUNS (results.Run) as one side; its machine is the first run's (runs of different
    machines refused; different MPI libraries are kept apart, in column `mpi`)."""
    parts, libs, sets = [], {}, {}
    facts = None
    for r in runs:
        f = machine_facts(r.meta)
        if facts is None:
            facts = f
        elif machine_differences(facts, f):
            raise UsageError(f"{label}: its runs were made on different machines "
                             f"({'; '.join(machine_differences(facts, f))}); compare one machine at a time")
        lib = short_mpi_name(f["mpi"])
        libs.setdefault(lib, f["mpi"])
        if r.points.empty:
            continue
        sets[str(r.path)] = working_sets.of_run(r)
        mpi = r.meta.get("mpi") or {}
        # the run's parameters and the statistics; not what describes a point's shape (modes,
        # extra percentiles, samples), which would otherwise be taken for parameters
        keep = [col for col in r.points.columns
                if col in r.param_names or col in _STAT_COLUMNS]
        parts.append(r.points[keep].assign(benchmark=r.benchmark, run=str(r.path),
                                           digest=_digest(r), ranks=mpi.get("ranks"),
                                           nodes=len(set(r.hosts)) or None, mpi=lib))
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    machine = {k: v for k, v in (facts or {}).items() if k != "mpi"}
    return Points(label, frame, machine, len(runs), list(missing), libs, sets)


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
    cols = [p for p in params if p in frame.columns]
    values = zip(*(frame[c].tolist() for c in cols)) if cols else ((),) * len(frame)
    out = frame.copy()
    out["point"] = [json.dumps({c: v for c, v in zip(cols, row) if _present(v)},
                               sort_keys=True, default=str) for row in values]
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


@dataclass
class _Side:
    side: stats.Side
    runs: tuple          # the run of each log value, in order
    digests: tuple
    row: dict


def _sides(frame, statistic) -> dict:
    """{(library, benchmark, metric, point): _Side or None}. Repeats inside one run (a
    contention run's `rep`) are one job's draws: their median is the run's."""
    f = frame.reset_index(drop=True)
    within_all = _within_se2(f, statistic)
    vals_all = f[statistic].to_numpy(float)
    runs_all, digests_all = f["run"].to_numpy(object), f["digest"].to_numpy(object)
    units = f["unit"].to_numpy(object)
    out = {}
    for key, idx in f.groupby(["mpi", "benchmark", "metric", "point"], sort=False).indices.items():
        runs, vals, within = runs_all[idx], vals_all[idx], within_all[idx]
        digests = digests_all[idx]
        if len(set(runs)) < len(runs):
            order = list(dict.fromkeys(runs))
            pick = [runs == r for r in order]
            vals = np.array([np.median(vals[m]) for m in pick])
            within = np.array([np.median(within[m]) for m in pick])
            digests = np.array([digests[m][0] for m in pick], dtype=object)
            runs = np.array(order, dtype=object)
        if not np.all(np.isfinite(vals) & (vals > 0)):
            out[key] = None      # a zero or missing value has no ratio
            continue
        out[key] = _Side(stats.Side(np.log(vals), within), tuple(runs),
                         tuple(sorted(digests)), {"unit": units[idx[0]]})
    return out


def _order(bench) -> list:
    try:
        return [m["name"] for m in benchmarks.benchmark(bench)["metrics"]]
    except KeyError:
        return []


def _sign(bench, metric) -> int:
    try:
        return 1 if benchmarks.metric(bench, metric)["better"] == "lower" else -1
    except KeyError:
        return 1


def _log_size(k):
    size = json.loads(k[3]).get("size")
    return math.log2(size + 1) if isinstance(size, (int, float)) and size >= 0 else None


def _moderated(keys, sa, sb) -> dict:
    """{key: (variance of one run's log value, its degrees of freedom)}: each point's variance
    between runs pooled over both sides, moderated over the points of its library, benchmark
    and metric (stats.moderate_sweep, a trend over the log size where every point has one)."""
    groups = {}
    for k in keys:
        groups.setdefault(k[:3], []).append(k)
    out = {}
    for ks in groups.values():
        s2, df = [], []
        for k in ks:
            ss = [s.side for s in (sa[k], sb[k]) if s.side.runs > 1]
            d = sum(s.runs - 1 for s in ss)
            same = sa[k].digests == sb[k].digests
            s2.append(sum((s.runs - 1) * s.sample_variance() for s in ss) / d
                      if d and not same else math.nan)
            df.append(d if not same else 0)
        x = [_log_size(k) for k in ks]
        post, pdf, _ = stats.moderate_sweep(s2, df, None if None in x else x)
        out.update({k: (float(v), float(d)) for k, v, d in zip(ks, post, pdf)})
    return out


@dataclass
class Comparison:
    rows: pd.DataFrame        # one per compared point and metric (see compare())
    only_a: list              # points one side lacks: "benchmark metric {params}"
    only_b: list
    not_compared: list        # matched points with a zero or missing value
    conditions: dict
    method: str
    tolerance: float
    statistic: str
    machines: tuple
    jobs_note: str
    sweeps: pd.DataFrame = field(default_factory=lambda: pd.DataFrame())  # pandas on first use
    libraries: list = field(default_factory=list)        # the libraries compared
    only_libraries: dict = field(default_factory=dict)   # {"A": [...], "B": [...]}
    notes: list = field(default_factory=list)

    @property
    def tests(self) -> pd.DataFrame:
        """The rows that are their point's test (one per point)."""
        return self.rows[self.rows["test"]] if len(self.rows) else self.rows

    def counts(self, lib=None) -> dict:
        t = self.tests if lib is None else self.tests[self.tests["mpi"] == lib]
        return {v: int((t["verdict"] == v).sum()) for v in VERDICTS}

    def sweeps_of(self, lib=None) -> pd.DataFrame:
        s = self.sweeps
        return s if lib is None or s.empty else s[s["mpi"] == lib]

    def verdict(self, lib=None) -> str:
        """'slower', 'inconclusive' or 'no regression' (of LIB, or of the whole)."""
        t = self.tests if lib is None else self.tests[self.tests["mpi"] == lib]
        return verdicts.whole(t, self.sweeps_of(lib), self.tolerance)

    def why(self, lib=None) -> str:
        t = self.tests if lib is None else self.tests[self.tests["mpi"] == lib]
        return verdicts.why_inconclusive(t, self.sweeps_of(lib), self.tolerance)

    def exit_status(self, undecided_ok=False) -> int:
        v = self.verdict()
        return 0 if v == verdicts.INCONCLUSIVE and undecided_ok else verdicts.EXIT[v]

    @property
    def slower(self) -> bool:
        return self.verdict() == verdicts.SLOWER


def _libraries(a, b, fa, fb, pair):
    """(the libraries compared, B's frame with its library renamed when paired, the pairing
    or None, the libraries only one side has)."""
    la, lb = sorted(set(fa["mpi"])), sorted(set(fb["mpi"]))
    shared = [x for x in la if x in lb]
    if not shared:
        if pair and len(la) == 1 and len(lb) == 1:
            return la, fb.assign(mpi=la[0]), (la[0], lb[0]), {}
        raise UsageError(f"{a.label} holds {', '.join(la)} and {b.label} holds {', '.join(lb)}: "
                         "they share no MPI library, and each library is compared with its own"
                         + ("; with one library a side, --allow-different-machines compares them"
                            if len(la) == 1 and len(lb) == 1 and not pair else ""))
    only = {s: [x for x in mine if x not in shared] for s, mine in (("A", la), ("B", lb))}
    return shared, fb, None, {s: v for s, v in only.items() if v}


def compare(a: Points, b: Points, statistic="median", tolerance=0.05, q=0.05, level=0.95,
            metrics=None, job_sd=None, pair_libraries=False) -> Comparison:
    """Every point both sides have, with its slowdown of B against A, interval and verdict,
    and every sweep's. JOB_SD: the variation between jobs assumed where each side has one run
    (None: no verdict there). PAIR_LIBRARIES: one library a side, different, compared with
    each other (the library is then a condition)."""
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
    libs, fb, paired, only_libs = _libraries(a, b, fa, fb, pair_libraries)
    fa, fb = fa[fa["mpi"].isin(libs)], fb[fb["mpi"].isin(libs)]
    cond = conditions(fa, fb)
    params = [p for p in sorted(set(param_columns(fa)) | set(param_columns(fb))) if p not in cond]
    if paired:
        cond["mpi"] = paired
    sa, sb = _sides(_keyed(fa, params), statistic), _sides(_keyed(fb, params), statistic)
    shared = [k for k in sa if k in sb]
    if not shared:
        raise UsageError(f"{a.label} and {b.label} share no point (MPI library, benchmark, "
                         f"parameters, ranks, nodes and metric); nothing to compare")
    keys = [k for k in shared if sa[k] is not None and sb[k] is not None]
    if not keys:
        raise UsageError(f"{a.label} and {b.label}: every shared point has a zero or missing "
                         f"{statistic}; nothing to compare")
    var = _moderated(keys, sa, sb)
    sign = {k: _sign(k[1], k[2]) for k in keys}
    test_of = verdicts.one_test_per_point(
        keys, {k: ((sa[k].runs, sa[k].side.logs, sa[k].side.se2_within),
                   (sb[k].runs, sb[k].side.logs, sb[k].side.se2_within), sign[k])
               for k in keys}, _order)
    recs = []
    for k in keys:
        ya, yb = sa[k].side, sb[k].side
        exact = sa[k].digests == sb[k].digests
        diff = stats.log_difference(ya, yb, var[k], job_sd=job_sd, exact=exact)
        params_k = json.loads(k[3])
        recs.append({"mpi": k[0], "benchmark": k[1], "metric": k[2], "unit": sa[k].row["unit"],
                     "better": "lower" if sign[k] > 0 else "higher", "params": params_k,
                     "size": params_k.get("size"),
                     "a": math.exp(float(np.mean(ya.logs))), "b": math.exp(float(np.mean(yb.logs))),
                     "runs_a": ya.runs, "runs_b": yb.runs, "jobs": diff.jobs, "_diff": diff,
                     "_sign": sign[k], "_key": k, "_test_key": test_of[k],
                     "_test": test_of[k] == k})
    band = math.log1p(tolerance)
    logs_of = {k: (dict(zip(sa[k].runs, sa[k].side.logs)), dict(zip(sb[k].runs, sb[k].side.logs)),
                   sign[k], sa[k].digests == sb[k].digests) for k in keys if test_of[k] == k}
    # the points and the sweeps share --fdr (Bonferroni between the two families, a fifth for
    # the sweeps): when nothing changed, any false verdict has a probability of at most q
    sweeps = verdicts.sweep_rows(list(logs_of), logs_of, {k: var[k][0] for k in logs_of},
                                 q * SWEEP_SHARE, band, level, {k: var[k][1] for k in logs_of})
    qp = q * (1 - SWEEP_SHARE) if len(sweeps) else q
    rows = verdicts.point_verdicts(recs, band, qp, level)
    ks = set(keys)
    not_compared = [_name(k) for k in shared if k not in ks]
    only_a = sorted(_name(k) for k in sa if k not in sb and k[0] in libs)
    only_b = sorted(_name(k) for k in sb if k not in sa and k[0] in libs)
    tests = rows[rows["test"]]
    sel = multiplicity.fcr_level(qp, int(tests["selected"].sum()), len(tests), level)
    return Comparison(rows, only_a, only_b, sorted(not_compared), cond,
                      METHOD.format(q=q, qp=qp, qs=q * SWEEP_SHARE, m=len(tests), s=len(sweeps),
                                    sel=sel),
                      tolerance,
                      statistic, (a.machine, b.machine), _jobs_note(set(rows["jobs"]), job_sd),
                      sweeps, libs, only_libs)


def _jobs_note(jobs, job_sd) -> str:
    if jobs == {"exact"}:
        return "the same runs on both sides: the comparison is exact"
    if jobs <= {"measured", "exact"}:
        return "job-to-job variation measured from the runs of both sides"
    if "not measured" in jobs:
        return ("one run per side: job-to-job variation NOT measured, so no interval and no "
                "verdict there (measure several runs, --runs 3, or give --job-sd S)")
    if "default" in jobs:
        return (f"one run per side: job-to-job variation NOT measured; --job-sd {job_sd:g} "
                "(standard deviation between jobs) is assumed")
    return "job-to-job variation measured on one side only (its runs), assumed the same on the other"


def _name(k) -> str:
    params = json.loads(k[3])
    return f"{k[1]} {k[2]} " + " ".join(f"{p}={v}" for p, v in params.items()) + f" ({k[0]})"


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


def point_text(r, skip=(), also=()) -> str:
    """'pingpong latency 4 B: ×1.100 [1.05, 1.15]' and, where undecided, how many runs would
    decide; ALSO: the rows of the metrics derived from the same samples, shown beside it."""
    ci = (f"[{r['lo']:.3f}, {r['hi']:.3f}]" if math.isfinite(r["lo"]) else
          "(no interval: one run per side)")
    text = f"{r['benchmark']} {r['metric']} {where(r['params'], skip)}: ×{r['slowdown']:.3f} {ci}"
    if also:
        text += " (" + ", ".join(f"{x['metric']} ×{x['slowdown']:.3f}" for x in also) + ")"
    if r["verdict"] == "undecided":
        n = r["runs_needed"]
        text += (f" (about {int(n)} runs per side would decide at 80% power)"
                 if n is not None and n == n else
                 " (no number of runs up to 100 per side can promise a decision at 80% power)")
    return text


def sweep_text(r, skip=()) -> str:
    """'pingpong latency mode=pingpong, 23 sizes, 3 against 3 jobs: ×1.10 [1.07, 1.13]'; the
    parameters SKIP (said once for every point) left out."""
    where_ = " ".join(f"{k}={v}" for k, v in r["params"].items() if k not in skip)
    sizes = f"{r['sizes']} sizes"
    if r.get("groups", 1) > 1:    # the sizes disagree: this group's shift, never one for all
        sizes = (f"sizes {human(int(r['size_lo']))}-{human(int(r['size_hi']))} ({r['sizes']}; the "
                 f"sweep's sizes disagree, Cochran's Q {r['q']:.3g} on {r['q_df']} df, "
                 f"p {r['q_p']:.2g}: {r['groups']} groups)")
    return (f"{r['benchmark']} {r['metric']}{' ' + where_ if where_ else ''}, {sizes}, "
            f"{r['jobs_a']} against {r['jobs_b']} jobs: ×{r['slowdown']:.3f} "
            f"[{r['lo']:.3f}, {r['hi']:.3f}]")

