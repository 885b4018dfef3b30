"""The sequential test of drift (analysis/drift.py, docs/statistics.md "Drift"): Page's
two-sided CUSUM of a series' values, each standardized against the mean of those before it
(self-starting: no in-control level is assumed), with its false alarms stated per series
per year.

Page (1954), "Continuous inspection schemes", Biometrika 41(1/2): C+_t = max(0, C+_{t-1} +
z_t - K), C-_t likewise on -z_t; the series alarms when either passes h. K = 1 is tuned for
a shift of two standard deviations (a 10% step at 2-5% noise); at K = 0.5 the busy checks
that clipping leaves at 2.5 sigma (5% of them, all on the worse side) added up to a drift. A stationary series' run length to a false alarm is about
exponential with mean ARL(h); Siegmund's approximation (Siegmund 1985, "Sequential
Analysis", ch. X; Montgomery, "Introduction to Statistical Quality Control", 9.1.7) gives,
for one side, ARL = (exp(2 K b) - 2 K b - 1) / (2 K^2), b = h + 1.166, and half that for two.
So the chance of a false alarm within a year of N values is 1 - exp(-N / ARL(h)): the p of a
series whose path reached h. Because the path only grows as values are added, a series
looked at every day and judged at the year's end alarms exactly when the path over the year
passes h: the rate holds for the daily look, not for one look."""

from __future__ import annotations

import math

from .. import lazy

np = lazy.module("numpy")

K = 1.0
START = 20      # values before the first standardized one: its reference (mean and sigma)
SIGMA_VALUES = 400  # the values before one that give its sigma (a year of daily checks)
EVERY = 8           # past 64 values, sigma is learned again every EVERY values


def arl(h: float, k: float = K) -> float:
    """The mean number of values to a false alarm of the two-sided CUSUM at threshold H."""
    b = h + 1.166
    return (math.expm1(2 * k * b) - 2 * k * b) / (2 * k * k) / 2


def p_year(h: float, per_year: float, k: float = K) -> float:
    """The chance that a stationary series of PER_YEAR values a year passes H within a year."""
    return -math.expm1(-per_year / arl(h, k)) if h > 0 else 1.0


def threshold(alpha: float, per_year: float, k: float = K) -> float:
    """The h whose p_year is ALPHA (bisection)."""
    lo, hi = 0.0, 1.0
    while p_year(hi, per_year, k) > alpha:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if p_year(mid, per_year, k) > alpha else (lo, mid)
    return hi


def standardized(y, sigmas, start: int = START):
    """Each value of Y from index START less the mean of those before it, over the standard
    deviation of that difference, SIGMAS[t] sqrt(1 + 1/t) (SIGMAS[t]: learned from the values
    before t alone, so that a value's z is the same at every later look: a sigma learned from
    the whole series at each look moved the early values' z from look to look, and one of
    those looks passed h in 33% of stationary daily series a year)."""
    y = np.asarray(y, dtype=float)
    t = np.arange(len(y), dtype=float)[start:]
    before = np.concatenate([[0.0], np.cumsum(y)[:-1]])[start:]
    return (y[start:] - before / t) / (np.asarray(sigmas)[start:] * np.sqrt(1 + 1 / t))


def trailing(x, f, last: int = SIGMA_VALUES):
    """F of the LAST values before each index of X (F of the first value at index 0), learned
    again at every index to 64, then every EVERY (a median of 400 values at each of 10 000)."""
    out = np.empty(len(x))
    v = math.nan
    for t in range(len(x)):
        if t < 64 or t % EVERY == 0 or v != v:
            v = f(x[max(0, t - last):max(t, 1)])
        out[t] = v
    return out


def path(z, k: float = K):
    """max(C+_t, C-_t) for each t of Z."""
    up = down = 0.0
    out = np.empty(len(z))
    for i, x in enumerate(z):
        up, down = max(0.0, up + x - k), max(0.0, down - x - k)
        out[i] = max(up, down)
    return out
