"""How many runs per side would decide an undecided point of `jostle compare` (docs/statistics.md,
"Runs that decide"), at the power the line claims.

The normal formula n = 2 v (z_a + z_p)^2 / gap^2 promised 80% and gave 44% at a x1.10 shift
and 15% at x1.07 (issue 45): with a few runs the test is a t of few degrees of freedom, and
the variance v it was given is itself an estimate from few runs, as often too small as too
large. So the power of n runs is Student's t's (2 (n - 1) degrees of freedom, the difference
shifted by gap / se), and it is averaged over what the variance may be given its estimate
(v x df / chi-square(df), at the midpoints of NODES equal slices of the upper SURE of that
distribution): an expected power (O'Hagan, Stevens and Campbell 2005, "Assurance in clinical
trial design", Pharmaceutical Statistics 4(3)), taken where the variance is not the lucky
small one. The smallest n whose expected power reaches POWER is
named; where none up to MOST does, the line says that no number can be promised."""

from __future__ import annotations

import math
from typing import Optional

from . import stats

POWER = 0.80
NODES = 9
# The variance is taken from the upper half of what it may be (its posterior above its median):
# the half where it was underestimated is where advice fails (the whole posterior: 70% of
# points followed at x1.07 decided, the upper half: 85%; bench/runs_needed.py).
SURE = 0.5


def _power(n, gap, scales, alpha) -> float:
    df = 2 * (n - 1)
    t = stats.t_quantile(1 - alpha / 2, df)
    return sum(stats.t_sf(t - gap / math.sqrt(2 * v / n), df) for v in scales) / len(scales)


def runs_needed(diff: stats.LogDifference, band: float, alpha=0.05, power=POWER,
                most=100) -> Optional[int]:
    """The fewest runs per side (2 .. MOST) that decide DIFF with expected power POWER, if
    the difference stays as measured: its distance GAP to the band BAND reached at level
    ALPHA (the Benjamini-Hochberg threshold the point faces when it leans out of the band,
    0.05 to be called `same` when it leans in). None where none does, or the spread is
    unknown."""
    gap = abs(band - abs(diff.d))
    v = diff.per_run_var
    if gap <= 0 or not v > 0:
        return None
    dfv = diff.df
    scales = [v] if not (math.isfinite(dfv) and dfv > 0) else [
        v * dfv / stats.chi2_quantile((j + 0.5) / NODES * (1 - SURE), dfv) for j in range(NODES)]
    if _power(most, gap, scales, alpha) < power:
        return None
    lo, hi = 1, most           # the power grows with n: the least n that reaches it
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _power(mid, gap, scales, alpha) >= power:
            hi = mid
        else:
            lo = mid
    return hi
