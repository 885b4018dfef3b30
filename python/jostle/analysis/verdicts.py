"""The decisions of a comparison (comparison.compare): which compared metrics are one test,
each point's verdict, each sweep's verdict with the job as the unit, and the verdict of the
whole (docs/statistics.md, "Verdicts").

- One test per point: the metrics of a point whose oriented log values differ by the same
  constant in every run of both sides (latency, rtt and bandwidth of one ping-pong: derived
  from the same samples) give the same answer; the first of them in the benchmark's list
  (`jostle-bench --describe`) is the point's test, the others are shown beside it.
- Points: Benjamini-Hochberg over the points' tests of the whole comparison.
- Sweeps: per MPI library, benchmark, metric and series (the parameters but the size), first
  whether the sizes share one shift (Cochran's Q, analysis/heterogeneity.py: where they
  disagree, one row per group of neighbouring sizes that agree, never one shift), then the
  shift common to the sizes (of a group), with the job as the unit (stats.sweep_difference of each job's
  precision-weighted mean log over the sizes every job has), tested against the tolerance (as
  a point: slower only when the shift lies beyond it); Benjamini-Hochberg over the sweeps.
- The whole: SLOWER when a point or a sweep is slower; INCONCLUSIVE when none is but a point
  or a sweep that could be slower is undecided (its interval reaches beyond the tolerance on
  the slower side), or nothing could be judged; otherwise no regression.
"""

from __future__ import annotations

import json
import math

from . import heterogeneity, multiplicity, power, stats
from .. import lazy
np = lazy.module("numpy")
pd = lazy.module("pandas")

VERDICTS = ("slower", "undecided", "faster", "same")   # the table's order: the worst first
SAME_TEST = 1e-3        # log values within 0.1% of a constant apart: the same test
SLOWER, INCONCLUSIVE, NO_REGRESSION = "slower", "inconclusive", "no regression"
EXIT = {NO_REGRESSION: 0, SLOWER: 1, INCONCLUSIVE: 3}


def one_test_per_point(keys, sides, order) -> dict:
    """{key: the key of the point's test} over KEYS ((library, benchmark, metric, point)), whose
    SIDES[key] hold ((runs, logs, se2 within) of A, the same of B, oriented sign);
    ORDER(benchmark) the benchmark's metrics in the order --describe lists them."""
    groups = {}
    for k in keys:
        groups.setdefault((k[0], k[1], k[3]), []).append(k)
    out = {}
    for (_, bench, _), ks in groups.items():
        rank = {m: i for i, m in enumerate(order(bench))}
        ks = sorted(ks, key=lambda k: (rank.get(k[2], len(rank)), k[2]))
        tests = []
        for k in ks:
            out[k] = next((t for t in tests if _same_test(sides[t], sides[k])), k)
            if out[k] == k:
                tests.append(k)
    return out


def _same_test(s, t) -> bool:
    """Whether S and T, each ((runs A, logs A, se2 A), (runs B, logs B, se2 B), sign), are one
    test: their oriented logs differ by one constant, run by run (rtt = 2 latency, bandwidth =
    size / latency, of the same samples). An interpolated median of such a transform is not
    the transform of the median: they differ by up to the square of the median's interval
    half-width h (in log, 2 log cosh h <= h^2). Where every run's interval has the same width
    on both, as the same order statistics give, that much more is allowed."""
    (ra, la, va), (rb, lb, vb), sign = s
    (ta, ma, wa), (tb, mb, wb), sign2 = t
    if list(ra) != list(ta) or list(rb) != list(tb):
        return False
    diff = np.concatenate([sign * np.asarray(la) - sign2 * np.asarray(ma),
                           sign * np.asarray(lb) - sign2 * np.asarray(mb)])
    if not np.all(np.isfinite(diff)):
        return False
    se2, se2_t = np.concatenate([va, vb]), np.concatenate([wa, wb])
    same_width = np.all(se2 > 0) and np.allclose(se2, se2_t, rtol=1e-4, atol=0)
    h2 = stats.t_quantile(0.975, math.inf) ** 2 * float(np.max(se2)) if same_width else 0.0
    return bool(np.ptp(diff) <= SAME_TEST + 2 * h2)


def _oriented(d, sign, level):
    lo, hi = d.interval(level)
    return (lo, hi) if sign > 0 else (-hi, -lo)


def point_verdicts(recs, band, q, level) -> pd.DataFrame:
    """RECS (dicts with _diff, _sign, _test: whether the row is its point's test) with their
    verdicts: BH over the tests; a row that is not a test takes its test's."""
    tests = [r for r in recs if r["_test"]]
    p = [r["_diff"].p_outside(band) for r in tests]
    selected, padj, n_sel = multiplicity.bh(p, q)
    sel_level = multiplicity.fcr_level(q, n_sel, len(tests), level)
    threshold = q * (n_sel + 1) / max(len(tests), 1)   # what one more selection must reach
    decided = {}
    for r, pi, pa, s in zip(tests, p, padj, selected):
        d, sign = r["_diff"], r["_sign"]
        lo, hi = _oriented(d, sign, level)
        dd = sign * d.d
        if s:
            verdict = "slower" if dd > 0 else "faster"
        elif -band <= lo and hi <= band:
            verdict = "same"
        else:
            verdict = "undecided"
        need = None
        if verdict == "undecided":
            if d.jobs == "not measured":
                need = 2   # a second run per side measures the variation between jobs
            else:
                n = power.runs_needed(d, band, threshold if abs(d.d) > band else 0.05)
                need = None if n is None else max(n, r["runs_a"] + 1, r["runs_b"] + 1)
        decided[r["_key"]] = dict(p=pi, p_adj=float(pa), selected=bool(s), verdict=verdict,
                                  runs_needed=need)
    out = []
    for r in recs:
        d, sign = r.pop("_diff"), r.pop("_sign")
        tkey, key = r.pop("_test_key"), r.pop("_key")
        r.pop("_test")
        lo, hi = _oriented(d, sign, level)
        slo, shi = _oriented(d, sign, sel_level)
        r.update(ratio=r["b"] / r["a"], slowdown=math.exp(sign * d.d), lo=math.exp(lo),
                 hi=math.exp(hi), sel_lo=math.exp(slo), sel_hi=math.exp(shi), df=d.df,
                 **decided[tkey], test=tkey == key,
                 same_test_as=None if tkey == key else tkey[2])
        out.append(r)
    return pd.DataFrame(out)


def sweep_rows(tests, logs_of, post_var, q, band, level, post_df=None) -> pd.DataFrame:
    """One row per sweep (per group of sizes where they disagree): TESTS the keys of the
    points' tests; LOGS_OF[key]: ({run: log} of A, {run: log} of B, sign, exact);
    POST_VAR[key], POST_DF[key]: the moderated variance of one run there, its degrees of
    freedom."""
    series = {}
    for k in tests:
        params = json.loads(k[3])
        size = params.pop("size", None)
        if not isinstance(size, (int, float)):
            continue
        series.setdefault((k[0], k[1], k[2], json.dumps(params, sort_keys=True)), []).append(k)
    rows, diffs = [], []
    for (lib, bench, metric, params), ks in series.items():
        ks = [k for k in ks if math.isfinite(post_var.get(k, math.nan)) and post_var[k] > 0]
        if len(ks) < 2 or any(logs_of[k][3] for k in ks):
            continue
        ks.sort(key=lambda k: json.loads(k[3])["size"])
        # the sizes must share one shift before one is reported (issue 45: half the sizes at
        # x0.5, half at x1.10 were "faster x0.696, the shift common to every size")
        d = [_mean(logs_of[k][1]) - _mean(logs_of[k][0]) for k in ks]
        w = [1 / (post_var[k] * (1 / len(logs_of[k][0]) + 1 / len(logs_of[k][1]))) for k in ks]
        # the variances' typical degrees of freedom (a point kept on its own has few)
        var_df = float(np.median([(post_df or {}).get(k, math.inf) for k in ks]))
        het = dict(zip(("q", "q_df", "q_p"), heterogeneity.cochran_q(d, w, var_df)))
        parts = heterogeneity.groups(d, w, var_df)
        for a, b in parts:
            row = _sweep(logs_of, ks[a:b], post_var)
            if row is None:
                continue
            diffs.append(row[0])
            rows.append({"mpi": lib, "benchmark": bench, "metric": metric,
                         "params": json.loads(params), "sizes": b - a,
                         "size_lo": json.loads(ks[a][3])["size"],
                         "size_hi": json.loads(ks[b - 1][3])["size"], "groups": len(parts),
                         **het, **row[1]})
    if not rows:
        return pd.DataFrame(columns=["mpi", "benchmark", "metric", "params", "sizes", "size_lo",
                                     "size_hi", "groups", "q", "q_df", "q_p", "jobs_a",
                                     "jobs_b", "slowdown", "lo", "hi", "p", "p_adj",
                                     "verdict"])
    # the tolerance is part of the null, as a point's: slower only when the shift lies beyond
    # it (a test against zero, then the estimate past the tolerance, called a uniform x1.04
    # slower in 19 of 100 sweeps at a tolerance of 5%: issue 50)
    p = [d.p_outside(band) for d, _ in diffs]
    selected, padj, _ = multiplicity.bh(p, q)
    for r, (d, sign), pi, pa, s in zip(rows, diffs, p, padj, selected):
        lo, hi = _oriented(d, sign, level)
        dd = sign * d.d
        if s and abs(dd) > band:
            verdict = "slower" if dd > 0 else "faster"
        elif -band <= lo and hi <= band:
            verdict = "same"
        else:
            verdict = "undecided"
        r.update(slowdown=math.exp(dd), lo=math.exp(lo), hi=math.exp(hi), p=pi, p_adj=float(pa),
                 verdict=verdict)
    return pd.DataFrame(rows)


def _sweep(logs_of, ks, post_var) -> "tuple | None":
    """((difference, sign), {jobs_a, jobs_b, df}) of the sizes KS with the job as the unit, or
    None when their jobs cannot give one."""
    runs_a = set.intersection(*(set(logs_of[k][0]) for k in ks))
    runs_b = set.intersection(*(set(logs_of[k][1]) for k in ks))
    if not runs_a or not runs_b or (len(runs_a) < 2 and len(runs_b) < 2):
        return None
    w = np.array([1 / post_var[k] for k in ks])
    d = stats.sweep_difference(_job_means(logs_of, ks, w, 0, runs_a),
                               _job_means(logs_of, ks, w, 1, runs_b))
    if d is None:
        return None
    return (d, logs_of[ks[0]][2]), {"jobs_a": len(runs_a), "jobs_b": len(runs_b), "df": d.df}


def _mean(logs: dict) -> float:
    return sum(logs.values()) / len(logs)


def _job_means(logs_of, ks, w, side, runs) -> list:
    """Each job's mean log over the sweep's sizes KS, weighted by W (1 / its variance)."""
    return [float(np.dot(w, [logs_of[k][side][r] for k in ks]) / w.sum()) for r in sorted(runs)]


def _could_be_slower(rows, tolerance):
    return rows[(rows["verdict"] == "undecided")
                & ~(rows["hi"] <= 1 + tolerance)]   # NaN (no interval): could be anything


def whole(points, sweeps, tolerance) -> str:
    """SLOWER, INCONCLUSIVE or NO_REGRESSION for POINTS (their tests) and SWEEPS."""
    if (points["verdict"] == "slower").any() or (
            not sweeps.empty and (sweeps["verdict"] == "slower").any()):
        return SLOWER
    if points.empty or not _could_be_slower(points, tolerance).empty or (
            not sweeps.empty and not _could_be_slower(sweeps, tolerance).empty):
        return INCONCLUSIVE
    return NO_REGRESSION


def why_inconclusive(points, sweeps, tolerance) -> str:
    """What left the verdict open, in one sentence."""
    pts = _could_be_slower(points, tolerance)
    sw = _could_be_slower(sweeps, tolerance) if not sweeps.empty else sweeps
    parts = []
    if len(pts):
        unmeasured = pts["lo"].isna().sum()
        parts.append(f"{len(pts)} point(s) undecided that could be slower"
                     + (f" ({unmeasured} with one run per side and no --job-sd: no interval)"
                        if unmeasured else ""))
    if len(sw):
        parts.append(f"{len(sw)} sweep(s) undecided that could be slower")
    return "; ".join(parts) or "nothing could be judged"
