"""The K MPI jobs of one setting (`--runs K`: NAME-r1 … NAME-rK, campaign.repeated) pooled
into one run, so that a figure or a table draws the setting once, not once per job.

One MPI job is one draw of what a job gets (its buffers' physical pages, docs/statistics.md):
a job's own 95% interval of the median does not cover the next job. So a pooled point takes
the median over the jobs of each job's statistic (median, p99, mean, …), and its interval
columns the widest the jobs give: min, p25 and ci95_lo the lowest job's, max, p75 and ci95_hi
the highest job's, the interval of the median widened to every job's median. A band or an
error bar drawn from them spans the variation between jobs.
"""

from __future__ import annotations

import dataclasses
import json
import re

from .results import Run
from .. import lazy
pd = lazy.module("pandas")

_JOB = re.compile(r"^(?P<setting>.+)-r(?P<k>[1-9][0-9]*)$")
LOWER = ("min", "p25", "ci95_lo")   # the lowest job's: the interval reaches every job
UPPER = ("max", "p75", "ci95_hi")
_DROPPED = ("samples_offset", "samples_count")   # one job's samples file: no pooled samples


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


def _converged(values):
    known = values.dropna()
    return None if known.empty else bool(known.astype(bool).all())


def _pooled(name, jobs) -> Run:
    params = list(dict.fromkeys(p for j in jobs for p in j.param_names))
    parts = [j.points for j in jobs if not j.points.empty]
    points = pd.DataFrame()
    if parts:
        df = pd.concat(parts, ignore_index=True).drop(columns=list(_DROPPED), errors="ignore")
        if "median" in df:   # a job's median inside the pooled interval, even without its ci95
            for c, side in (("ci95_lo", "min"), ("ci95_hi", "max")):
                df[c] = df[[c, "median"]].agg(side, axis=1) if c in df else df["median"]
        key = [c for c in (*params, "metric", "unit") if c in df]
        # a point is its params, metric and unit; JSON so that a missing param (NaN) matches
        df["_point"] = [json.dumps(v, default=str) for v in df[key].astype(object)
                        .where(df[key].notna(), None).values.tolist()]
        how = {}
        for c in df.columns:
            if c in key or c == "_point":
                continue
            how[c] = ("min" if c in LOWER else "max" if c in UPPER or c == "modes" else
                      "sum" if c == "n" else _converged if c == "converged" else
                      "median" if pd.api.types.is_numeric_dtype(df[c]) else "first")
        firsts = df.groupby("_point", sort=False)[key].first()
        points = df.groupby("_point", sort=False).agg(how)
        points = firsts.join(points).reset_index(drop=True)[[c for c in df if c != "_point"]]
    meta = dict(jobs[0].meta, warnings=list(dict.fromkeys(w for j in jobs for w in j.warnings)))
    return dataclasses.replace(
        jobs[0], path=jobs[0].path.with_name(f"{name}.jsonl"), meta=meta, points=points,
        param_names=params, complete=all(j.complete for j in jobs),
        problem="; ".join(f"{j.name}: {j.problem}" for j in jobs if j.problem), jobs=len(jobs))
