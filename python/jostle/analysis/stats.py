"""The statistics that compare, baseline and scan share (docs/statistics.md).

Pure functions of numbers: no records, no files. A comparison works on the logarithm of a
statistic (a ratio is a difference there, and a slowdown of 10% weighs as much at 4 B as at
4 MiB); a run is one draw of an MPI job, so the variance that counts is the one between runs.

- t_sf, t_quantile: Student's t without scipy (the incomplete beta by its continued fraction,
  Press et al., Numerical Recipes, 3rd ed., 6.4).
- variance_prior, moderate: each point's variance between runs shrunk toward the sweep's typical
  one (Smyth 2004, "Linear models and empirical Bayes methods for assessing differential
  expression", SAGMB 3(1), art. 3, sec. 6.2): 3 runs give 2 degrees of freedom per point alone.
- LogDifference / log_difference: the interval of a log ratio from two sides' run values
  (Welch-Satterthwaite's degrees of freedom when both sides have several runs).
- bh: Benjamini-Hochberg's step-up (JRSS B 57(1), 1995) and its adjusted p-values; the
  intervals of the selected points at level 1 - R q / m are Benjamini and Yekutieli's
  false-coverage-rate intervals (JASA 100(469), 2005), dual to the selection.
- median_ci95: the order-statistic interval of a median, as jostle-bench computes it.
- mad, robust_z: the median absolute deviation (scaled by 1.4826, consistent for a normal
  sample) and the robust z score of each value against the others.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Optional, Sequence
from .. import lazy
np = lazy.module("numpy")


# The default variation between MPI jobs, as a standard deviation of the log of a point's
# median, used when neither side has two runs: bench/compare_targets.py measured it over 120
# launches of one ping-pong command on this project's 2-core EPYC VM (busy: load 15-22). The
# robust (MAD-based) spread between jobs was 0.09-0.19 at 19 of 23 sizes, 0.22-1.5 at the four
# where more jobs stalled (docs/statistics.md, "The default for one run per side").
JOB_SD_DEFAULT = 0.20
MAD_NORMAL = 1.4826   # 1 / Phi^-1(3/4): MAD * this estimates sigma for a normal sample


# -- Student's t --------------------------------------------------------------------------

def _betacf(a, b, x):
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                    -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betainc(a, b, x):
    """The regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_sf(t, df) -> float:
    """P(T > t) for Student's t with DF degrees of freedom (df = inf: the normal)."""
    if math.isinf(df):
        return 0.5 * math.erfc(t / math.sqrt(2.0))
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


def _t_pdf(t, df) -> float:
    if math.isinf(df):
        return math.exp(-t * t / 2) / math.sqrt(2 * math.pi)
    return math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
                    - (df + 1) / 2 * math.log1p(t * t / df))


@functools.lru_cache(maxsize=4096)
def t_quantile(p, df) -> float:
    """The t such that P(T <= t) = P: Newton's method on t_sf from 0 (the distribution is
    unimodal and symmetric, so the steps from the centre never overshoot the root)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability {p} outside (0, 1)")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    t = 0.0
    for _ in range(100):
        step = (1 - p - t_sf(t, df)) / -_t_pdf(t, df)
        t += step
        if abs(step) < 1e-12 * max(1.0, abs(t)):
            break
    return t


# -- Robust statistics --------------------------------------------------------------------

def median_ci95(values) -> tuple:
    """The distribution-free 95% interval of the median, as jostle-bench computes it
    (core/stats.c: order statistics at ranks n/2 -+ 0.98 sqrt(n), the whole range below 6)."""
    x = sorted(values)
    n = len(x)
    if n < 6:
        return (x[0], x[-1]) if n else (math.nan, math.nan)
    half = 0.98 * math.sqrt(n)
    j = max(1, math.floor(0.5 * n - half))
    k = min(n, math.ceil(0.5 * n + 1.0 + half))
    return x[j - 1], x[k - 1]


def mad(values) -> float:
    """The median absolute deviation, scaled to estimate a normal sample's sigma."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan
    return float(MAD_NORMAL * np.median(np.abs(v - np.median(v))))


def robust_z(values) -> np.ndarray:
    """(x - median) / MAD of VALUES, each; NaN where the MAD is 0 or undefined."""
    v = np.asarray(values, dtype=float)
    s = mad(v)
    if not s or not math.isfinite(s):
        return np.full(v.shape, math.nan)
    return (v - np.nanmedian(v)) / s


# -- Variance between runs ----------------------------------------------------------------

def _digamma(x):
    r = 0.0
    while x < 6.0:
        r -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    return r + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f / 240)))


def _trigamma(x):
    r = 0.0
    while x < 6.0:
        r += 1.0 / (x * x)
        x += 1.0
    f = 1.0 / (x * x)
    return r + 1 / x + f / 2 + f / x * (1 / 6 - f * (1 / 30 - f * (1 / 42 - f / 30)))


def _trigamma_inverse(y):
    """The x > 0 with trigamma(x) = y: Newton's method from x = 0.5 + 1/y (Smyth 2004's start;
    trigamma decreases and is convex, so the steps stay positive)."""
    x = 0.5 + 1.0 / y
    for _ in range(50):
        h = 1e-6 * x
        slope = (_trigamma(x + h) - _trigamma(x - h)) / (2 * h)
        step = (_trigamma(x) - y) / slope
        x = max(x - step, x / 2)
        if abs(step) < 1e-10 * x:
            break
    return x


@dataclass
class Prior:
    """Smyth's prior of the variances of a sweep: s0^2 with d0 degrees of freedom."""
    s2: float
    df: float


def variance_prior(s2: Sequence[float], df: Sequence[float]) -> Optional[Prior]:
    """Estimate (s0^2, d0) from the points' sample variances S2 with DF degrees of freedom
    each, by the moments of log s^2 (Smyth 2004, sec. 6.2). None with fewer than 3 usable
    points; d0 = inf when the variances spread no more than chance alone would make them."""
    s2, df = np.asarray(s2, float), np.asarray(df, float)
    ok = (df > 0) & np.isfinite(s2) & (s2 > 0)
    if ok.sum() < 3:
        return None
    s2, df = s2[ok], df[ok]
    e = np.log(s2) - np.array([_digamma(d / 2) for d in df]) + np.log(df / 2)
    excess = float(np.var(e, ddof=1)) - float(np.mean([_trigamma(d / 2) for d in df]))
    if excess <= 0:
        d0 = math.inf
        s0 = float(np.exp(np.mean(e)))
    else:
        d0 = 2 * _trigamma_inverse(excess)
        s0 = float(np.exp(np.mean(e) + _digamma(d0 / 2) - math.log(d0 / 2)))
    return Prior(s0, d0)


def moderate(s2: float, df: float, prior: Optional[Prior]) -> tuple:
    """(posterior variance, its degrees of freedom) of one point: (d0 s0^2 + d s^2) / (d0 + d)."""
    if prior is None or not math.isfinite(s2) or df <= 0:
        return (prior.s2, prior.df) if prior is not None and df <= 0 else (s2, df)
    if math.isinf(prior.df):
        return prior.s2, math.inf
    return (prior.df * prior.s2 + df * s2) / (prior.df + df), prior.df + df


# -- Intervals of a log ratio --------------------------------------------------------------

@dataclass
class Side:
    """One side's values of one point, one per run, as logs; SE2_WITHIN: each run's own
    variance of its log statistic (from its interval), a floor under the spread between runs."""
    logs: np.ndarray
    se2_within: np.ndarray

    @property
    def runs(self) -> int:
        return len(self.logs)

    def sample_variance(self) -> float:
        return float(np.var(self.logs, ddof=1)) if self.runs >= 2 else math.nan


@dataclass
class LogDifference:
    """mean(log B) - mean(log A), its standard error and degrees of freedom; JOBS says
    whether the variation between jobs is measured (both sides' runs or one side's) or is
    the default (one run per side)."""
    d: float
    se: float
    df: float
    jobs: str        # "measured", "one side", "default", "exact" (the same runs on both sides)
    per_run_var: float   # the variance of one run's log value, for runs_needed

    def interval(self, level=0.95) -> tuple:
        if self.se == 0:
            return self.d, self.d
        h = t_quantile(1 - (1 - level) / 2, self.df) * self.se
        return self.d - h, self.d + h

    def p_outside(self, band: float) -> float:
        """Two-sided p-value that the true difference lies outside [-BAND, BAND] on the side
        observed (dual to the interval: p <= alpha iff the 1 - alpha interval misses the band)."""
        if self.se == 0:
            return 0.0 if abs(self.d) > band else 1.0
        return min(1.0, 2 * t_sf((abs(self.d) - band) / self.se, self.df))


def per_run_variance(side: Side, var_between: float) -> float:
    return max(var_between, float(np.mean(side.se2_within)) if side.runs else 0.0)


def log_difference(a: Side, b: Side, var_a=(math.nan, 0.0), var_b=(math.nan, 0.0),
                   job_sd=JOB_SD_DEFAULT, exact=False) -> LogDifference:
    """The difference of B's and A's mean logs. VAR_A, VAR_B: (variance of one run, its
    degrees of freedom) between runs, e.g. moderated; NaN where a side has one run. A side
    of one run borrows the other side's variance; when both have one run, the default
    JOB_SD (squared) is added to the runs' own variances and the normal quantile used."""
    d = float(np.mean(b.logs) - np.mean(a.logs))
    if exact:
        return LogDifference(d, 0.0, math.inf, "exact", 0.0)
    (va, dfa), (vb, dfb) = var_a, var_b
    has_a, has_b = math.isfinite(va) and dfa > 0, math.isfinite(vb) and dfb > 0
    if has_a and has_b:
        jobs = "measured"
    elif has_a or has_b:
        jobs = "one side"
        va, dfa, vb, dfb = (va, dfa, va, dfa) if has_a else (vb, dfb, vb, dfb)
    else:
        jobs = "default"
        va = vb = job_sd ** 2
        dfa = dfb = math.inf
    va, vb = per_run_variance(a, va), per_run_variance(b, vb)
    ua, ub = va / a.runs, vb / b.runs
    se2 = ua + ub
    if jobs == "one side":     # one estimate serves both sides: its own degrees of freedom
        df = dfa
    else:                      # Welch-Satterthwaite
        den = (ua * ua / dfa if math.isfinite(dfa) else 0) + (ub * ub / dfb if math.isfinite(dfb) else 0)
        df = se2 * se2 / den if den > 0 else math.inf
    return LogDifference(d, math.sqrt(se2), df, jobs, (va + vb) / 2)


def runs_needed(diff: LogDifference, band: float, level=0.95, most=100) -> Optional[int]:
    """About how many runs per side would make the interval decide (inside the band, or
    clear of it), if the difference and the spread stay as measured; None beyond MOST."""
    gap = abs(band - abs(diff.d))
    if gap <= 0 or diff.per_run_var <= 0:
        return None
    z = t_quantile(1 - (1 - level) / 2, math.inf)
    n = math.ceil(z * z * 2 * diff.per_run_var / (gap * gap))
    return n if n <= most else None


# -- False discoveries --------------------------------------------------------------------

def bh(pvalues, q=0.05) -> tuple:
    """Benjamini-Hochberg at level Q: (rejected mask, adjusted p-values, R the number
    rejected). Controls the expected share of false discoveries among the rejected points at
    Q for independent or positively dependent tests; with every null true, the chance of any
    rejection is at most Q."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    if m == 0:
        return np.zeros(0, bool), np.zeros(0), 0
    order = np.argsort(p)
    ranked = p[order] * m / np.arange(1, m + 1)
    adj_sorted = np.minimum.accumulate(ranked[::-1])[::-1]
    adj = np.empty(m)
    adj[order] = np.minimum(adj_sorted, 1.0)
    rejected = adj <= q
    return rejected, adj, int(rejected.sum())


def fcr_level(q, selected, m, level=0.95) -> float:
    """The confidence level of the selected points' intervals that keeps their false
    coverage rate at Q (Benjamini and Yekutieli 2005): 1 - R q / m, never above LEVEL's
    own when nothing is selected."""
    return 1 - max(selected, 1) * q / m if m else level
