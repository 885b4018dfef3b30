"""Many tests at once, one home: Benjamini-Hochberg's false discovery rate (the compared points
and sweeps, a scan's flagged nodes), Holm's family-wise step-down (a scan's drain), and the
level of the selected points' intervals (Benjamini-Yekutieli's false coverage rate)."""

from .. import lazy
np = lazy.module("numpy")


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


def holm_cut(pvalues, q) -> float:
    """The largest p-value Holm's step-down rejects at family-wise level Q over P-VALUES (NaN:
    not a test), 0 when it rejects none: what passes it, a healthy allocation passes with
    probability at most Q, whatever the dependence between the tests."""
    p = np.sort(np.asarray(pvalues, dtype=float)[np.isfinite(pvalues)])
    m = len(p)
    passed = p <= q / (m - np.arange(m)) if m else np.zeros(0, bool)
    k = int(np.argmin(passed)) if not passed.all() else m   # the first that fails
    return float(p[k - 1]) if k else 0.0


def bh_rejected(pvalues, q):
    """Benjamini-Hochberg over P-VALUES (NaN: not a test): (rejected mask, adjusted p)."""
    p = np.asarray(pvalues, dtype=float)
    ok = np.isfinite(p)
    rejected, adjusted = np.zeros(p.shape, bool), np.full(p.shape, np.nan)
    if ok.any():
        r, adj, _ = bh(p[ok], q)
        rejected[ok], adjusted[ok] = r, adj
    return rejected, adjusted
