"""The statistics that compare, baseline and scan share (docs/statistics.md).

Pure functions of numbers: no records, no files. A comparison works on the logarithm of a
statistic (a ratio is a difference there, and a slowdown of 10% weighs as much at 4 B as at
4 MiB); a run is one draw of an MPI job, so the variance that counts is the one between runs.

- t_sf, t_quantile: Student's t without scipy (the incomplete beta by its continued fraction,
  Press et al., Numerical Recipes, 3rd ed., 6.4).
- variance_prior, moderate: each point's variance between runs shrunk toward the sweep's typical
  one (Smyth 2004, "Linear models and empirical Bayes methods for assessing differential
  expression", SAGMB 3(1), art. 3, sec. 6.2): 3 runs give 2 degrees of freedom per point alone.
- moderate_sweep: the moderation compare uses, which keeps each size's interval honest when one
  size is much noisier than the others: the prior as a robust trend over the size (limma-trend,
  Law et al. 2014), points whose variance the prior cannot explain left out of it and given
  their own (Phipson et al. 2016's idea), and the prior never weighing more than a quarter of
  the point's own runs.
- LogDifference / log_difference: the interval of a log ratio from two sides' run values
  (Welch-Satterthwaite's degrees of freedom when both sides have several runs).
- chi2_quantile: the chi-square's quantile (bisection on the incomplete gamma).
- sweep_difference: the shift common to a sweep, with the job as the unit (a Welch interval of
  the per-job precision-weighted means over the sweep).
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
from . import multiplicity
np = lazy.module("numpy")


# A typical variation between MPI jobs, as a standard deviation of the log of a point's
# median: bench/compare_targets.py measured it over 120 launches of one ping-pong command on
# this project's 2-core EPYC VM (busy: load 15-22). The robust (MAD-based) spread between jobs
# was 0.09-0.19 at 19 of 23 sizes, 0.22-1.5 at the four where more jobs stalled
# (docs/statistics.md, "One run per side"). It is what --job-sd's help suggests; it is never
# assumed: with one run per side and no --job-sd, compare gives ratios and no verdict.
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


def wilson(k: int, n: int, z: float = 1.96) -> tuple:
    """Wilson's interval (95% at Z = 1.96) of a rate of K in N: what a simulation's count of
    false alarms or hits is said with."""
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, c - h), min(1.0, c + h)


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


def _gammq(a, x):
    """The regularized upper incomplete gamma Q(a, x) (Numerical Recipes 6.2: the series
    below a + 1, the continued fraction above)."""
    if x <= 0:
        return 1.0
    lg = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(500):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(lg))
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 500):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return math.exp(lg) * h


def f_sf(x, d1, d2) -> float:
    """P(F > x) for Fisher's F with D1 and D2 degrees of freedom (d2 = inf: chi-square(d1)/d1)."""
    if x <= 0:
        return 1.0
    if math.isinf(d2):
        return _gammq(d1 / 2, d1 * x / 2)
    return _betainc(d2 / 2, d1 / 2, d2 / (d2 + d1 * x))


def _theil_sen(x, y) -> tuple:
    """(intercept, slope) of the median of pairwise slopes (Sen 1968): a line that a few
    outlying points do not move."""
    i, j = np.triu_indices(len(x), 1)
    dx = x[j] - x[i]
    ok = dx != 0
    slope = float(np.median((y[j] - y[i])[ok] / dx[ok])) if ok.any() else 0.0
    return float(np.median(y - slope * x)), slope


OUTLIER_Q = 0.05   # BH level at which a point's variance is judged beyond the prior
SOFT = 1.0         # a point borrows in proportion to its variance's upper tail p under the prior
BOUND = 0.25       # and never more degrees of freedom than this share of its own


@dataclass
class SweepPrior:
    """The robust prior of one sweep (moderate_sweep): per point its prior variance and prior
    degrees of freedom, and the points left out as beyond the prior."""
    s2: np.ndarray        # the prior variance at each point (the trend)
    df: np.ndarray        # the prior degrees of freedom each point borrows, d0_i
    d0: float             # the sweep's d0 before the per-point bounds
    outliers: np.ndarray  # bool: the point's variance is beyond what the prior explains


def sweep_prior(s2, df, x=None) -> Optional[SweepPrior]:
    """The prior of the variances S2 (DF degrees of freedom each) of one sweep's points, X their
    log sizes (None: no trend). None with fewer than 3 usable points.

    1. e_i = log s2_i - digamma(d_i/2) + log(d_i/2), unbiased for log sigma2_i (Smyth 2004).
    2. A trend of e over x by Theil-Sen's robust line (limma-trend's idea, Law et al. 2014);
       a constant without x or with fewer than 4 points.
    3. d0 and the prior's level by Smyth's moments of the residuals, the largest tenth of the
       points left out of the first fit (so that a very noisy size cannot hide itself by
       widening the prior: Phipson et al. 2016's concern).
    4. A point whose s2 is beyond the prior's predictive law F(d_i, d0) (its upper tail,
       Benjamini-Hochberg at OUTLIER_Q over the points) is left out and 2-4 repeat.
    5. Each point borrows d0_i = d0 min(1, p_i / SOFT) degrees of freedom (0 for a point left
       out), never more than BOUND d_i: bench/compare_simulation.py measured that a looser
       bound leaves the noisiest sizes of this project's variance profile below 93% coverage
       (docs/statistics.md, "Moderation that covers")."""
    s2, df = np.asarray(s2, float), np.asarray(df, float)
    n = len(s2)
    ok = (df > 0) & np.isfinite(s2) & (s2 > 0)
    if ok.sum() < 3:
        return None
    xs = np.zeros(n) if x is None else np.asarray(x, float)
    e = np.full(n, np.nan)
    e[ok] = (np.log(s2[ok]) - np.array([_digamma(d / 2) for d in df[ok]]) + np.log(df[ok] / 2))
    keep = ok.copy()
    top = max(1, math.ceil(ok.sum() / 10)) if ok.sum() >= 6 else 0
    if top:
        keep[np.argsort(np.where(ok, e, -np.inf))[-top:]] = False
    trig = np.array([_trigamma(d / 2) if d > 0 else 0.0 for d in df])
    for _ in range(6):
        use_trend = x is not None and keep.sum() >= 4 and np.ptp(xs[keep]) > 0
        a, b = _theil_sen(xs[keep], e[keep]) if use_trend else (float(np.mean(e[keep])), 0.0)
        r = e - (a + b * xs)
        centre = float(np.mean(r[keep]))
        excess = float(np.var(r[keep], ddof=2 if use_trend else 1)) - float(np.mean(trig[keep]))
        if excess <= 0:
            d0, shift = math.inf, 0.0
        else:
            d0 = 2 * _trigamma_inverse(excess)
            shift = _digamma(d0 / 2) - math.log(d0 / 2)
        prior = np.exp(a + b * xs + centre + shift)
        p = np.ones(n)
        p[ok] = [f_sf(s2[i] / prior[i], df[i], d0) for i in np.flatnonzero(ok)]
        beyond = np.zeros(n, bool)
        beyond[ok] = multiplicity.bh(p[ok], OUTLIER_Q)[0]
        new = ok & ~beyond
        if (new == keep).all() or new.sum() < 3:
            break
        keep = new
    with np.errstate(invalid="ignore"):
        weight = np.minimum(1.0, p / SOFT)
        borrowed = np.where(weight > 0, d0 * weight, 0.0) if math.isfinite(d0) else \
            np.where(weight > 0, math.inf, 0.0)
    borrowed = np.where(beyond | ~ok, 0.0, np.minimum(borrowed, BOUND * df))
    return SweepPrior(prior, borrowed, d0, beyond & ok)


def moderate_sweep(s2, df, x=None) -> tuple:
    """(posterior variances, their degrees of freedom, the SweepPrior or None) of one sweep's
    points: (d0_i s0_i^2 + d_i s_i^2) / (d0_i + d_i) with d0_i + d_i degrees of freedom
    (sweep_prior); a point without its own variance (d_i = 0) keeps NaN."""
    s2, df = np.asarray(s2, float), np.asarray(df, float)
    prior = sweep_prior(s2, df, x)
    if prior is None:
        return s2.copy(), df.copy(), None
    with np.errstate(invalid="ignore", divide="ignore"):
        post = (prior.df * prior.s2 + df * s2) / (prior.df + df)
    post = np.where(df > 0, post, np.nan)
    return post, np.where(df > 0, prior.df + df, 0.0), prior


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
    whether the variation between jobs is measured (both sides' runs or one side's), given
    (--job-sd, one run per side), not measured (one run per side: no interval) or nil (the
    same runs on both sides)."""
    d: float
    se: float
    df: float
    jobs: str        # "measured", "one side", "default", "not measured", "exact"
    per_run_var: float   # the variance of one run's log value, for power.runs_needed

    def interval(self, level=0.95) -> tuple:
        if self.se == 0:
            return self.d, self.d
        if not math.isfinite(self.se):
            return math.nan, math.nan
        h = t_quantile(1 - (1 - level) / 2, self.df) * self.se
        return self.d - h, self.d + h

    def p_outside(self, band: float) -> float:
        """Two-sided p-value that the true difference lies outside [-BAND, BAND] on the side
        observed (dual to the interval: p <= alpha iff the 1 - alpha interval misses the band);
        1 where nothing can be said (no interval)."""
        if self.se == 0:
            return 0.0 if abs(self.d) > band else 1.0
        if not math.isfinite(self.se):
            return 1.0
        return min(1.0, 2 * t_sf((abs(self.d) - band) / self.se, self.df))

    def p_zero(self) -> float:
        """Two-sided p-value of no difference at all."""
        return self.p_outside(0.0)


def per_run_variance(side: Side, var_between: float) -> float:
    return max(var_between, float(np.mean(side.se2_within)) if side.runs else 0.0)


def log_difference(a: Side, b: Side, var=(math.nan, 0.0), job_sd=None,
                   exact=False) -> LogDifference:
    """The difference of B's and A's mean logs. VAR: (the variance of one run's log value
    between runs, its degrees of freedom), one for both sides (moderate_sweep of the pooled
    variances); NaN where neither side has two runs. Then JOB_SD (squared), when given, is
    added to the runs' own variances with the normal quantile; without it there is no
    interval (jobs "not measured"). A run's own variance is a floor under either."""
    d = float(np.mean(b.logs) - np.mean(a.logs))
    if exact:
        return LogDifference(d, 0.0, math.inf, "exact", 0.0)
    v, dfv = var
    if math.isfinite(v) and dfv > 0:
        jobs = "measured" if a.runs > 1 and b.runs > 1 else "one side"
    elif job_sd is not None:
        jobs, v, dfv = "default", job_sd ** 2, math.inf
    else:
        return LogDifference(d, math.nan, math.nan, "not measured", math.nan)
    va, vb = per_run_variance(a, v), per_run_variance(b, v)
    return LogDifference(d, math.sqrt(va / a.runs + vb / b.runs), dfv, jobs, (va + vb) / 2)


def sweep_difference(ya, yb) -> Optional[LogDifference]:
    """The shift common to a sweep with the job as the unit: YA, YB are each side's per-job
    values (a job's precision-weighted mean log over the sweep's sizes); Welch's interval
    (Welch-Satterthwaite's degrees of freedom), or one side's variance for both when the other
    has one job. None when neither side has two jobs."""
    ya, yb = np.asarray(ya, float), np.asarray(yb, float)
    m, n = len(ya), len(yb)
    if m == 0 or n == 0 or (m < 2 and n < 2):
        return None
    d = float(np.mean(yb) - np.mean(ya))
    va = float(np.var(ya, ddof=1)) if m > 1 else math.nan
    vb = float(np.var(yb, ddof=1)) if n > 1 else math.nan
    if m > 1 and n > 1:
        ua, ub = va / m, vb / n
        den = ua * ua / (m - 1) + ub * ub / (n - 1)
        df = (ua + ub) ** 2 / den if den > 0 else math.inf
        return LogDifference(d, math.sqrt(ua + ub), df, "measured", (va + vb) / 2)
    v, dfv = (va, m - 1) if m > 1 else (vb, n - 1)
    return LogDifference(d, math.sqrt(v / m + v / n), dfv, "one side", v)


@functools.lru_cache(maxsize=4096)
def chi2_quantile(p: float, df: float) -> float:
    """The x such that P(chi-square(DF) <= x) = P (bisection on the incomplete gamma)."""
    lo, hi = 0.0, max(10.0, 10.0 * df)
    while 1.0 - _gammq(df / 2, hi / 2) < p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if 1.0 - _gammq(df / 2, mid / 2) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2
