"""The K MPI jobs of one setting (`--runs K`: NAME-r1 … NAME-rK, campaign.repeated) pooled
into one run, so that a figure or a table draws the setting once, not once per job.

One MPI job is one draw of what a job gets (its buffers' physical pages, docs/statistics.md):
a job's own 95% interval of the median does not cover the next job, so the job is the unit.
A pooled point, as `jostle compare` sees a side's runs:
- median: the geometric mean of the jobs' medians (the mean of their logs);
- ci95_lo, ci95_hi: the 95% confidence interval of it over the jobs, Student's t with K - 1
  degrees of freedom on the log scale, the spread between jobs never taken below a job's own
  (its interval of the median);
- jobs_lo, jobs_hi: the range of the jobs' medians (the lowest and the highest job), drawn
  apart from the interval and labelled so;
- n: the number of jobs; samples: the samples of all of them;
- min, max: the lowest and the highest sample of any job; p25, p75, p99, mean and the other
  statistics: the median over the jobs of each job's (a typical job's distribution);
- between: "varies" where the lowest and the highest job lie apart beyond their own intervals,
  "bimodal" where the jobs fall in two groups of two or more, apart beyond their intervals and
  each far tighter than the gap between them; "" where the jobs agree (between()).
Where a job's median is not positive (a bandwidth at 0 B), the median over the jobs and the
widest of their intervals stand instead.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re

from .results import Run
from .. import lazy
np = lazy.module("numpy")
pd = lazy.module("pandas")

_JOB = re.compile(r"^(?P<setting>.+)-r(?P<k>[1-9][0-9]*)$")
LOWER = ("min",)   # the lowest job's
UPPER = ("max",)
_DROPPED = ("samples_offset", "samples_count")   # one job's samples file: no pooled samples
Z95 = 1.959963984540054


def job_name(name: str, k: int) -> str:
    """The name of job K (1-based) of run NAME launched several times."""
    return f"{name}-r{k}"


def setting(name: str) -> str:
    """The run name without its job suffix: 'pp-near-r2' -> 'pp-near'; others unchanged."""
    m = _JOB.match(name)
    return m["setting"] if m else name


def pool(runs) -> list:
    """RUNS with the jobs of one setting (same campaign folder, benchmark and setting name)
    pooled into one Run named after the setting, whose `jobs` says how many it holds; in the
    order of each setting's first job. A lone run is returned as it is."""
    groups = {}
    for r in runs:
        groups.setdefault((str(r.path.parent), r.benchmark, setting(r.name)), []).append(r)
    return [g[0] if len(g) == 1 else _pooled(name, g) for (_, _, name), g in groups.items()]


def _converged(df):
    """Per point (df's _point): whether every job that says converged or not did (None: none
    said), as a pandas reduction per point would, at once."""
    known = df["converged"].notna()
    ok = df["converged"].where(known, True).astype(bool)
    g = pd.DataFrame({"known": known, "ok": ok}).groupby(df["_point"], sort=False)
    said, every = g["known"].any(), g["ok"].all()
    return pd.Series([bool(o) if k else None for k, o in zip(said, every)], index=said.index,
                     name="converged")


def _pooled(name, jobs) -> Run:
    params = list(dict.fromkeys(p for j in jobs for p in j.param_names))
    parts = [j.points for j in jobs if not j.points.empty]
    points = pd.DataFrame()
    if parts:
        df = pd.concat(parts, ignore_index=True).drop(columns=list(_DROPPED), errors="ignore")
        if "median" in df:   # a job's median inside its own interval, even without its ci95
            for c, side in (("ci95_lo", "min"), ("ci95_hi", "max")):
                df[c] = df[[c, "median"]].agg(side, axis=1) if c in df else df["median"]
        key = [c for c in (*params, "metric", "unit") if c in df]
        # a point is its params, metric and unit; JSON so that a missing param (NaN) matches
        df["_point"] = [json.dumps(v, default=str) for v in df[key].astype(object)
                        .where(df[key].notna(), None).values.tolist()]
        how = {}
        for c in df.columns:
            if c in key or c in ("_point", "converged"):
                continue
            how[c] = ("min" if c in LOWER else "max" if c in UPPER or c == "modes" else
                      "sum" if c == "n" else
                      "median" if pd.api.types.is_numeric_dtype(df[c]) else "first")
        firsts = df.groupby("_point", sort=False)[key].first()
        points = df.groupby("_point", sort=False).agg(how)
        if "converged" in df:
            points = points.join(_converged(df))
        if "median" in df:
            pooled = _over_jobs(df)
            points = points.drop(columns=[c for c in pooled if c in points]).join(pooled)
        cols = [c for c in df if c != "_point"]
        cols += [c for c in ("samples", "jobs_lo", "jobs_hi", "between")
                 if c in points and c not in cols]
        points = firsts.join(points).reset_index(drop=True)[cols]
    meta = dict(jobs[0].meta, warnings=list(dict.fromkeys(w for j in jobs for w in j.warnings)))
    return dataclasses.replace(
        jobs[0], path=jobs[0].path.with_name(f"{name}.jsonl"), meta=meta, points=points,
        param_names=params, complete=all(j.complete for j in jobs),
        problem="; ".join(f"{j.name}: {j.problem}" for j in jobs if j.problem), jobs=len(jobs))


def _over_jobs(df) -> pd.DataFrame:
    """Per point (df's _point): the geometric mean of the jobs' medians and its 95% interval
    over the jobs (the job as the unit), the jobs' range, their number and their samples.
    Each point's jobs as numpy arrays, reduced as pandas reduces (NaN skipped, the sums in
    the same order): a pandas reduction per point cost 0.8 ms, 5 s for a fine sweep of 3 jobs."""
    med = df["median"].to_numpy(float)
    lo, hi = df["ci95_lo"].to_numpy(float), df["ci95_hi"].to_numpy(float)
    positive = (med > 0) & np.isfinite(med)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(np.where(positive, med, np.nan))
        own = ((np.log(hi) - np.log(lo)) / (2 * Z95)) ** 2   # a job's own variance of its log
    own = np.where(np.isfinite(own), own, 0.0)
    n = df["n"].to_numpy() if "n" in df else np.full(len(df), np.nan)
    if n.dtype.kind == "f":
        n = np.where(np.isnan(n), 0.0, n)           # pandas' sum skips NaN
    codes, points = pd.factorize(df["_point"], sort=False)
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.diff(codes[order])) + 1

    def skipna(a, how):
        a = a[~np.isnan(a)]
        return how(a) if a.size else math.nan
    out = {}
    for point, i in zip(points, np.split(order, starts) if len(order) else []):
        k = len(i)
        m, lo_i, hi_i = med[i], lo[i], hi[i]
        row = {"jobs_lo": skipna(m, np.min), "jobs_hi": skipna(m, np.max), "samples": n[i].sum(),
               "n": k, "between": between(m.tolist(), lo_i.tolist(), hi_i.tolist())}
        if positive[i].all():
            yi = y[i]
            mean = float(yi.sum() / k)
            var = float(((mean - yi) ** 2).sum() / (k - 1)) if k > 1 else 0.0
            var = max(var, float(own[i].sum() / k))
            half = _t975(k - 1) * math.sqrt(var / k) if k > 1 else 0.0
            row.update(median=math.exp(mean), ci95_lo=math.exp(mean - half),
                       ci95_hi=math.exp(mean + half))
        else:
            row.update(median=float(skipna(m, np.median)), ci95_lo=skipna(lo_i, np.min),
                       ci95_hi=skipna(hi_i, np.max))
        out[point] = row
    return pd.DataFrame.from_dict(out, orient="index")


def between(meds, los, his) -> str:
    """How one point's K launches (their medians MEDS, 95% intervals LOS-HIS) relate: "" when
    they agree (the lowest launch's interval reaches the highest's), "varies" when they lie
    apart beyond their own intervals, "bimodal" when, besides, the sorted medians split at
    their widest gap into two groups of two or more launches each, apart beyond their
    intervals, the gap (on the log scale) at least 3 times either group's own range. With 3
    launches a group would be one launch, which an outlier makes as well: "varies" only."""
    k = len(meds)
    if k < 2 or not all(m > 0 and math.isfinite(m) for m in meds):
        return ""
    order = sorted(range(k), key=lambda i: meds[i])
    if not his[order[0]] < los[order[-1]]:
        return ""
    y = [math.log(meds[i]) for i in order]
    gaps = [y[i + 1] - y[i] for i in range(k - 1)]
    j = max(range(k - 1), key=lambda i: gaps[i])
    low, high = order[:j + 1], order[j + 1:]
    if len(low) >= 2 and len(high) >= 2 and max(his[i] for i in low) < min(los[i] for i in high) \
            and gaps[j] >= 3 * max(y[j] - y[0], y[-1] - y[j + 1]):
        return "bimodal"
    return "varies"


_T975 = {1: 12.706205, 2: 4.302653, 3: 3.182446, 4: 2.776445, 5: 2.570582, 6: 2.446912,
         7: 2.364624, 8: 2.306004, 9: 2.262157, 10: 2.228139}


def _t975(df) -> float:
    """Student's t 97.5% quantile (tabulated to 10 degrees of freedom, then Cornish-Fisher's
    expansion: within 1e-4 beyond)."""
    if df in _T975:
        return _T975[df]
    z = Z95
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


t975 = _t975   # the same, for analysis.launches' interval of the next invocation
