"""Whether a sweep's sizes share one shift before one is reported (docs/statistics.md,
"Sweeps whose sizes disagree"): Cochran's Q over the sizes' log differences (Cochran 1954,
"The combination of estimates from different experiments", Biometrics 10(1)), and where they
disagree, the sizes cut into groups of neighbouring sizes that each agree (binary
segmentation: the cut that leaves the least Q inside the two parts, each part cut again while
its own Q disagrees): a protocol switch, small against large messages."""

from __future__ import annotations

import math

from . import stats

ALPHA = 0.01        # a sweep's sizes disagree when Cochran's Q has p below this
MAX_GROUPS = 4


def cochran_q(d, w, var_df=math.inf) -> tuple:
    """(Q, degrees of freedom, p) of estimates D with weights W (1 / their variance): the
    weighted squares of their distances from their weighted mean, chi-square of len - 1
    degrees of freedom when they share one value; with variances estimated from VAR_DF
    degrees of freedom, Q / (len - 1) against F(len - 1, VAR_DF) (a chi-square over
    estimated variances is too often large: 12% of 3-against-3 A/A sweeps at p < 0.001)."""
    if len(d) < 2:
        return 0.0, 0, 1.0
    mean = sum(wi * di for wi, di in zip(w, d)) / sum(w)
    q = sum(wi * (di - mean) ** 2 for wi, di in zip(w, d))
    df = len(d) - 1
    if math.isfinite(var_df) and var_df > 0:
        return q, df, stats.f_sf(q / df, df, var_df)
    return q, df, stats._gammq(df / 2, q / 2)


def groups(d, w, var_df=math.inf, alpha=ALPHA, most=MAX_GROUPS) -> list:
    """Index ranges (start, stop) of D (in size order) that each share one shift: the whole
    when Q does not disagree at ALPHA, else its best cut into two, each cut again, at most
    MOST groups."""
    out = [(0, len(d))]
    while len(out) < most:
        for i, (a, b) in enumerate(out):
            if b - a >= 2 and cochran_q(d[a:b], w[a:b], var_df)[2] < alpha:
                cut = min(range(a + 1, b), key=lambda c: cochran_q(d[a:c], w[a:c])[0]
                          + cochran_q(d[c:b], w[c:b])[0])
                out[i:i + 1] = [(a, cut), (cut, b)]
                break
        else:
            break
    return out
