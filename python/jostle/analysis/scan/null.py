"""The statistics of `jostle scan`'s judgement (docs/scan.md, "How suspects are found"): an
empirical null for each metric, estimated from the allocation's own values, a one-sided
p-value for each value under it, and Benjamini-Hochberg over every test of the scan.

The null of a metric is Efron's empirical null (Efron 2004, "Large-scale simultaneous
hypothesis testing: the choice of a null hypothesis", JASA 99:96-104): the healthy values'
centre and spread taken from the bulk of the values themselves (the median of their logs and
their MAD), not assumed. Medians of links (a node's) are fitted by their worse tail at every
N (fit_line). From TAIL_MIN values on, the worse side's own spread and tail are
estimated too: its quantiles at TAIL_LOW (0.75: its MAD) and at the one with TAIL_BEYOND values beyond it
(0.95 to 0.999) give the spread, and the degrees of freedom of a Student t when the second lies
more than TAIL_SES standard errors further out than a normal's would. So the heavy tails of
interference are not taken for faults, a summary compressed near its median (the median link
of a node whose own link is faster than most: a normal fitted to its far tail alone, fit_line)
does not make its worse side look narrow, and a
normal sample's chance wobble of a tail quantile does not cost the power that a t's heavier
extreme tail would. With fewer than MIN_TEST values no spread can be estimated: such a metric
is judged by the relative effect alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ... import lazy
from .. import stats

np = lazy.module("numpy")

MIN_TEST = 5          # fewer values of a metric: the relative effect alone
TAIL_LOW = 0.75       # the quantile of the worse side that gives its spread (its MAD)
TAIL_BEYOND = 10      # its tail: the quantile with this many values beyond it, from 0.95 to 0.999
TAIL_Q = (0.95, 0.999)
MEDIANS_BEYOND = 5    # medians: their tail quantile has this many values beyond it,
TAIL_SPAN = 4         # and their second quantile this many times as many
TAIL_SES = 3.0        # a tail heavier than a normal's by this many standard errors is a t's
HEAVY_SES = 2.0       # the links: the tail as heavy as this many standard errors allow
MAD_FLOOR = 0.01      # on the log scale: values all alike (a simulation) still have a spread
Q75_NORMAL = 0.6744897501960817
NU_MAX = 200.0
Z_REACH = 10.0        # a value this many spreads out is a fault any test must be able to select
BREAKDOWN = 0.1       # the share of slow values that cannot move a fingerprint's null
SCALE_EFF = 0.5      # a spread from quantiles has about this share of N - 1 d.f.
CENTRE_VAR = math.pi / 2   # N times the variance of a median of N normal values, in sigma^2


def tail_q(n, beyond=TAIL_BEYOND) -> float:
    """The quantile that measures the tail of N values: BEYOND of them beyond it."""
    return min(max(1 - beyond / n, TAIL_Q[0]), TAIL_Q[1])


def tail_ratio(nu, q) -> float:
    """The ratio of the Q-quantile of a t with NU d.f. to its TAIL_LOW-quantile."""
    return stats.t_quantile(q, nu) / stats.t_quantile(TAIL_LOW, nu)


def tail_se(n, q) -> float:
    """The standard error of tail_ratio's estimate at Q from N normal values (each sample
    quantile's relative one, sqrt(p(1-p)/n) / density / quantile, in quadrature)."""
    def rel(p):
        zq = stats.t_quantile(p, math.inf)
        dens = math.exp(-zq * zq / 2) / math.sqrt(2 * math.pi)
        return math.sqrt(p * (1 - p) / n) / dens / zq
    return tail_ratio(math.inf, q) * math.hypot(rel(q), rel(TAIL_LOW))


def fit_nu(ratio, q) -> float:
    """The degrees of freedom whose tail_ratio at Q is RATIO: inf (a normal) when RATIO is no
    more than a normal's, 1 (Cauchy) at most heavy."""
    if not math.isfinite(ratio) or ratio <= tail_ratio(NU_MAX, q):
        return math.inf
    if ratio >= tail_ratio(1.0, q):
        return 1.0
    lo, hi = 1.0, NU_MAX   # tail_ratio falls as nu grows
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if tail_ratio(mid, q) > ratio:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


@dataclass(frozen=True)
class Null:
    """A metric's empirical null on the log scale: CENTER (the median), MAD (raw: what the MAD
    of the null is, floored), NU (inf: normal), from N values; SHIFT (medians: <= 0) where
    the worse side's line of quantiles meets the centre, in the metric's log units."""
    center: float
    mad: float
    nu: float
    n: int
    shift: float = 0.0
    df: float = math.inf   # the spread's own degrees of freedom: how well N values fix it
    nu_seen: float = None  # the lightest tail the values allow (NU: the heaviest; None: NU)

    @property
    def nu_p(self) -> float:
        """The degrees of freedom of a p-value: the tail's and the spread's (scale_df), as
        1/nu adds (a t whose scale is itself estimated has the heavier tail of the two)."""
        inv = 1 / self.nu + 1 / self.df
        return 1 / inv if inv > 0 else math.inf

    @property
    def sigma(self) -> float:
        """The robust standard deviation: 1.4826 MAD (the scale of the reported z)."""
        return self.mad / Q75_NORMAL

    @property
    def t_scale(self) -> float:
        """The scale of the t whose MAD is the null's."""
        if math.isinf(self.nu):
            return self.sigma
        return self.mad / stats.t_quantile(0.75, self.nu)

    def z(self, logs, worse, u=None):
        """Robust z of each log value, positive on the worse side; U: each value's own
        standard uncertainty on the log scale, added in quadrature."""
        x = np.asarray(logs, dtype=float)
        u = np.zeros(x.shape) if u is None else np.nan_to_num(np.asarray(u, dtype=float))
        return (worse * (x - self.center) - self.shift) / np.hypot(self.sigma, u)

    def p(self, logs, worse, u=None):
        """One-sided p-value of each log value on the worse side (NaN where it is NaN)."""
        x = np.asarray(logs, dtype=float)
        u = np.zeros(x.shape) if u is None else np.nan_to_num(np.asarray(u, dtype=float))
        scale = self.t_scale * math.sqrt(1 + CENTRE_VAR / self.n)   # the centre's error too
        t = (worse * (x - self.center) - self.shift) / np.hypot(scale, u)
        return survival(t, self.nu_p)

    def reaches(self, bar) -> bool:
        """Whether a value Z_REACH spreads out gets a p-value of at most BAR for what N values
        leave unknown (the spread, the centre, how heavy the tail is: between the lightest
        and the heaviest they allow; a tail they show for sure is the null's): below it the
        null cannot select even a plain fault at the family's level, and statistics cannot
        decide."""
        seen = self.nu if self.nu_seen is None else self.nu_seen
        inv = 1 / self.df + max(0.0, 1 / self.nu - 1 / seen)
        t = Z_REACH / math.sqrt(1 + CENTRE_VAR / self.n)
        return float(survival(np.array([t]), 1 / inv if inv > 0 else math.inf)[0]) <= bar

    def median_se(self, m) -> float:
        """Standard error of the median of M values drawn from this null, on the log scale
        (the sample median's asymptotic normal: 1 / (2 f(0) sqrt(m)))."""
        if math.isinf(self.nu):
            f0 = 1 / (math.sqrt(2 * math.pi) * self.sigma)
        else:
            nu = self.nu
            f0 = math.exp(math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2)) / \
                math.sqrt(nu * math.pi) / self.t_scale
        return 1 / (2 * f0 * math.sqrt(max(m, 1)))


def survival(t, nu):
    """P(T > t), elementwise, for Student's t with NU d.f. (inf: the normal). On the better
    side (t <= 0, p >= 0.5, never a rejection at --fdr < 0.5) the normal's, which is cheap."""
    t = np.asarray(t, dtype=float)
    out = np.full(t.shape, np.nan)
    ok = np.isfinite(t)
    if ok.any():
        out[ok] = [0.5 * math.erfc(v / math.sqrt(2)) for v in t[ok].tolist()]
    heavy = ok & (t > 0) & (not math.isinf(nu))
    if heavy.any():
        out[heavy] = [stats.t_sf(v, nu) for v in t[heavy].tolist()]
    out[np.isposinf(t)] = 0.0
    out[np.isneginf(t)] = 1.0
    return out


def fit(logs, worse, medians=False, least=0.0, symmetric=False) -> "Null | None":
    """The empirical null of LOGS (finite values only), or None below MIN_TEST values: one
    method at every N, its spread's own uncertainty (df, CENTRE_VAR) in its p-values.
    MEDIANS: the values are medians of several links each (a node's links out): a normal (the
    links' own heavy tails do not survive a median) fitted to the worse side's tail
    (fit_line), since near the centre such medians are compressed (a node faster than the
    links it talks to has the median of theirs); its sigma at least LEAST (what the links say
    the nodes' own spread is: scan_links.node_spread). SYMMETRIC: values whose healthy spread
    is alike on both sides (a node's fingerprint): the tail's shape from the better side,
    which faults (always on the worse side) do not reach, so that a batch of up to BREAKDOWN
    of the nodes slow together is not taken for the null's tail (26 of 256 nodes at 0.7x were
    named in 0% of scans when the worse side's tail gave the shape: issue 45). Otherwise (the
    links) the worse side's own tail, as interference makes it."""
    x = np.asarray(logs, dtype=float)
    x = x[np.isfinite(x)]
    if x.size < MIN_TEST:
        return None
    n = int(x.size)
    center = float(np.median(x))
    floor = MAD_FLOOR * Q75_NORMAL
    mad = max(float(np.median(np.abs(x - center))), floor)
    if medians:
        sigma, shift = fit_line(worse * (x - center), max(mad / Q75_NORMAL, least))
        return Null(center, sigma * Q75_NORMAL, math.inf, n, shift, scale_df(n))
    side = worse * (x - center)
    nu = tail_both(side) if symmetric else None
    side_mad, nu, seen = fit_side(side, nu, heavy=not symmetric)
    return Null(center, max(mad, side_mad), nu, n, 0.0, scale_df(n), seen)


def tail_both(side) -> float:
    """The tail's degrees of freedom of values alike on both sides (SIDE: their distances from
    the median, positive on the worse side): the heavier of the better side's tail and the
    worse side's, the latter without the values farther out than any on the better side, when
    they are at most BREAKDOWN of all (a batch of slow nodes: not the tail, issue 45). More of
    them is a skew, kept."""
    far = side > -float(side.min())
    # healthy values too lie past the better side's extreme (by chance): half as many again
    keep = side[~far] if far.sum() <= math.ceil(1.5 * BREAKDOWN * side.size) else side
    return min(fit_side(-side)[1], fit_side(keep)[1])


def scale_df(n) -> float:
    """The degrees of freedom of a spread estimated from N values by quantiles (a MAD, the
    medians' tail line): SCALE_EFF of a standard deviation's N - 1. On normal samples of 5 to
    64 values, p < 1e-4 came 0.1-1.0 times as often as said at 0.6 (5-222 times with the
    spread taken as known); 0.5 keeps clean scans of 16 nodes from draining one at Holm's bar
    (2 of 400 scans, 4 at 0.6: bench/scan_allocations.py; tests/py/test_scan_small.py)."""
    return SCALE_EFF * (n - 1)


def fit_line(side, least) -> tuple:
    """(sigma, shift) of a normal tail SIDE = shift + sigma Z on the worse side of medians,
    SIDE their distances from the median towards it: the line through its quantiles with
    MEDIANS_BEYOND and with TAIL_SPAN times as many values beyond them, or, where that line
    is the less steep, the one from the centre through the first (slope at least LEAST, the
    bulk's, shift 0): whichever is the more lenient in the far tail. A node's median link is
    the slowest part of its routes, most often another's: the bulk of the medians is
    compressed, and only their far tail is the nodes' own spread (256 simulated nodes, 30
    fat-tree scans: the line from the centre through the quantile with 10 beyond put a
    healthy node past Holm's bar in 10, the line through 10 and 40 beyond in 3, through 5 and
    20 in none: docs/scan.md). Below 21 values the upper quantile is the second worst value,
    never one that leans on the worst (a 0.6x node among 16 bent the line its own way and was
    named in 23% of scans; at the second worst, in 97%); from 5 values, the line from the
    centre alone."""
    n = side.size
    q_hi = min(tail_q(n, MEDIANS_BEYOND), (n - 2) / (n - 1))
    q_lo = max(1 - TAIL_SPAN * MEDIANS_BEYOND / n, TAIL_LOW)
    lo, hi = (float(v) for v in np.quantile(side, [q_lo, q_hi]))
    z_lo, z_hi = stats.t_quantile(q_lo, math.inf), stats.t_quantile(q_hi, math.inf)
    centre = max(hi / z_hi, least)
    if q_hi <= q_lo:
        return centre, 0.0
    spacing = (hi - lo) / (z_hi - z_lo)
    if spacing <= centre:
        return centre, 0.0
    return spacing, hi - spacing * z_hi


def fit_side(side, nu=None, heavy=False) -> tuple:
    """(MAD-equivalent spread, degrees of freedom, those the values show) of the worse side, SIDE the values'
    distances from the median towards it, from its quantiles at TAIL_LOW and tail_q(n); NU:
    the tail's degrees of freedom when known (the spread alone is fitted). HEAVY: the
    heaviest tail the values allow (their ratio's upper bound, HEAVY_SES standard errors
    beyond it), for values whose tails are expected (interference): a normal only where
    many values show it; otherwise a t only where they show one (TAIL_SES). The third: the
    lightest tail they allow (HEAVY), None otherwise."""
    n, q = side.size, tail_q(side.size)
    lo, hi = float(np.quantile(side, TAIL_LOW)), float(np.quantile(side, q))
    if not lo > 0:
        return 0.0, math.inf if nu is None else nu, None
    seen = None
    if nu is None:
        ratio, se = hi / lo, tail_se(n, q)
        if heavy:
            nu, seen = fit_nu(ratio + HEAVY_SES * se, q), fit_nu(ratio - HEAVY_SES * se, q)
        else:
            nu = math.inf if ratio <= tail_ratio(math.inf, q) + TAIL_SES * se \
                else fit_nu(ratio, q)
    return lo / stats.t_quantile(TAIL_LOW, nu) * stats.t_quantile(0.75, nu), nu, seen


def effect(logs, ref_logs, worse):
    """How many times worse than the reference, minus 1 (0.25: 25% worse; a bandwidth at 0.6
    of the reference is 0.67 worse); negative on the better side."""
    return np.exp(worse * (np.asarray(logs, dtype=float) - np.asarray(ref_logs, dtype=float))) - 1


def logs_of(values):
    """The logs of VALUES, NaN where a value is not a positive number."""
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v) & (v > 0)
    return np.where(ok, np.log(np.where(ok, v, 1.0)), np.nan)
