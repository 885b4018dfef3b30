"""The false-drain budget of `jostle check` (docs/check.md, "Tolerances"): a check's tolerance
from a site's target (at most one healthy node drained per NODE_YEARS node-years, with a check
every INTERVAL_S seconds), through the retest rule `--slurm` uses (a first failure marks the
node suspect, a second in a row drains it: check.slurm_action), with the tails of the check's
noise learned from the reference's own checks.

On the log scale, with the worse side positive, a check of a good node is u + e: u where the
node sits (normal, the class's spread; for a node judged against its own saved checks, the
error of their median), e its noise from check to check (Student's t of NU degrees of freedom
and SCALE, fitted to the reference's checks). A node at u fails a check with q(u) = P(e > T -
u); over a year of n checks it is drained with 1 - exp(-lambda), lambda = q^2 + (n - 1) q^2
(1 - q) (the expected number of failures that follow a pass and are failed again, a Poisson
count for small q). The class's rate is its mean over u; T is the smallest tolerance whose rate
is within the check's share of the budget."""

from __future__ import annotations

import math

from . import stats
from .. import lazy
np = lazy.module("numpy")

YEAR_S = 365.25 * 86400
INTERVAL_S = 300.0      # SLURM's HealthCheckInterval: a check every 5 minutes
NODE_YEARS = 100.0      # at most one healthy node drained per 100 node-years
# The t degrees of freedom tried for the noise (1000: the normal, to 0.1%).
TAILS = (2.0, 2.5, 3.0, 4.0, 5.0, 7.0, 10.0, 15.0, 30.0, 1000.0)
# The tails a likelihood cannot rule out: within this of the best (a one-sided 90% interval:
# chi-square(1) at 0.80, halved).
LIKELIHOOD_DROP = 0.82
# The tails assumed until the checks rule them out: the t3 that round trips and memory sweeps
# on shared nodes showed in the review of 2026-11-29 (issue 45). Ruled out, the heaviest of
# those not ruled out is taken (a light tail is what spends the budget). Taking the heaviest
# not ruled out from the start made more checks a wider bound: 10 checks of t3 noise cannot
# rule out t2 (of infinite variance; kept in half the draws), whose quantile at the budget's
# 1e-4 is 4 times t3's (one node: 2 291% from 10 checks where 5 gave 883%). Fewer deviations
# than MIN_RESIDUALS are not fitted at all.
MIN_RESIDUALS = 8
PRIOR_TAILS = 3.0
# The grid of a normal u: midpoints over +-7 sd, weighted by its density.
_U = [(-7 + 14 * (i + 0.5) / 141) for i in range(141)]
_W = [math.exp(-x * x / 2) for x in _U]
_W = [w / sum(_W) for w in _W]


def checks_a_year(interval: float) -> float:
    return YEAR_S / interval


def _scale_em(xs, nu, iters=40) -> float:
    """The maximum-likelihood scale of XS (an array) under a t of NU degrees of freedom (EM:
    each value weighted by (nu + 1) / (nu + z^2))."""
    x2 = xs * xs
    s2 = float(x2.mean())
    if s2 <= 0:
        return 0.0
    for _ in range(iters):
        s2 = float((x2 * (nu + 1) / (nu + x2 / s2)).mean())
    return math.sqrt(s2)


def _loglik(xs, nu, scale) -> float:
    c = (math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu * math.pi)
         - math.log(scale))
    return len(xs) * c - (nu + 1) / 2 * float(np.log1p((xs / scale) ** 2 / nu).sum())


def fit_tails(residuals) -> tuple:
    """(nu, scale) of the noise of RESIDUALS (centred): PRIOR_TAILS unless its likelihood is
    more than LIKELIHOOD_DROP below the best, else the heaviest t of TAILS within that, at
    its maximum-likelihood scale; PRIOR_TAILS when fewer than MIN_RESIDUALS; (TAILS[-1], 0)
    when none differs from 0."""
    xs = np.asarray([x for x in residuals if math.isfinite(x)], dtype=float)
    if not xs.any():
        return TAILS[-1], 0.0
    if len(xs) < MIN_RESIDUALS:
        return PRIOR_TAILS, _scale_em(xs, PRIOR_TAILS)
    fits = [(_loglik(xs, nu, s), nu, s) for nu in TAILS if (s := _scale_em(xs, nu)) > 0]
    best = max(f[0] for f in fits)
    kept = [(nu, s) for l, nu, s in fits if l >= best - LIKELIHOOD_DROP]
    return next(((nu, s) for nu, s in kept if nu == PRIOR_TAILS), min(kept))


def residuals(logs) -> list:
    """Each check's deviation from its node's mean (LOGS: a list per node), scaled by
    sqrt(k / (k - 1)) to undo what the node's own mean took of it."""
    out = []
    for xs in logs:
        if len(xs) > 1:
            m, f = sum(xs) / len(xs), math.sqrt(len(xs) / (len(xs) - 1))
            out += [(x - m) * f for x in xs]
    return out


def _q(margin, scale, nu) -> float:
    """P(e > MARGIN) for e ~ t(NU) x SCALE."""
    if scale <= 0:
        return 0.0 if margin >= 0 else 1.0
    return stats.t_sf(margin / scale, nu)


def drains_a_year(tol, spread, scale, nu, interval=INTERVAL_S, suspect=True) -> float:
    """Healthy nodes drained per node-year at log tolerance TOL: the mean over u ~ N(0,
    SPREAD) of 1 - exp(-lambda) (module doc); without SUSPECT, a first failure drains."""
    n = checks_a_year(interval)
    total = 0.0
    for x, w in zip(_U, _W):
        q = _q(tol - spread * x, scale, nu)
        lam = (q * q + (n - 1) * q * q * (1 - q)) if suspect else n * q
        total += w * -math.expm1(-lam)
    return total


def tolerance(budget, spread, scale, nu, interval=INTERVAL_S, suspect=True) -> float:
    """The smallest log tolerance whose drains_a_year is within BUDGET (bisection)."""
    lo, hi = 0.0, 1.0
    while drains_a_year(hi, spread, scale, nu, interval, suspect) > budget and hi < 50:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if drains_a_year(mid, spread, scale, nu, interval, suspect) > budget:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-6:
            break
    return hi


def caught_at_second(slow, tol, spread, scale, nu) -> float:
    """P(a node SLOW worse (log) fails two checks in a row): the mean over u of q^2."""
    return sum(w * _q(tol - slow - spread * x, scale, nu) ** 2 for x, w in zip(_U, _W))


def smallest_caught(tol, spread, scale, nu, p=0.95) -> float:
    """The smallest slowdown (log) drained at its second check with probability P."""
    lo, hi = 0.0, tol + 10 * (spread + scale) + 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if caught_at_second(mid, tol, spread, scale, nu) < p:
            lo = mid
        else:
            hi = mid
    return hi


def median_error(scale, nu, k) -> float:
    """The standard deviation of the median of K checks of t(NU) x SCALE noise (1 / (2 f(0)
    sqrt k)): the error of a node's own centre."""
    return scale / (2 * stats._t_pdf(0.0, nu) * math.sqrt(max(1.0, k)))


def buys(ref: dict, interval=INTERVAL_S, own=False) -> tuple:
    """(healthy nodes drained per 1 000 node-years, the smallest slowdown drained at its
    second check with 95% probability, as a fraction) that reference REF's tolerance (or its
    own_tolerance, OWN) buys at a check every INTERVAL seconds, at the reference's own
    estimates (spread, scale, tails): what the site gets if the class is as its checks say."""
    frac = ref["own_tolerance"] if own else ref["tolerance"]
    higher = ref.get("worse") == "higher"
    tol = math.log1p(frac) if higher else -math.log1p(-min(frac, 0.999999))
    nu, scale = ref.get("tails", TAILS[-1]), ref.get("scale", 0.0)
    n = ref["checks"] / max(1, ref["nodes"])
    u = median_error(scale, nu, n) if own else math.log1p(ref.get("spread", 0.0))
    slow = smallest_caught(tol, u, scale, nu)
    return (1000 * drains_a_year(tol, u, scale, nu, interval),
            math.expm1(slow) if higher else -math.expm1(-slow))
