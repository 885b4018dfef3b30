"""A class's reference for `jostle check` (docs/check.md, "References"): from the values good
nodes measured, the value a check is judged against and its tolerance, or the refusal of a
reference that could not tell a bad node from a good one.

On the log scale a check of a good node is the class's centre, plus where that node sits in
the class (the nodes' spread), plus its own noise from check to check (the repeatability).
The tolerance bounds the next check of any good node: Z standard deviations of that sum
(Z: a normal's one-sided quantile at FALSE_ALARM), each standard deviation taken at the upper
end of its 95% interval for the degrees of freedom it was learned from, so that a reference
learned from few values is wide by construction, and no wider than its data say."""

from __future__ import annotations

import math
from statistics import NormalDist

from . import stats
from .check import MEASURED, METRICS

# A check of a good node fails with this probability at most (3 sigma's share of a normal).
FALSE_ALARM = 0.00135
Z = NormalDist().inv_cdf(1 - FALSE_ALARM)
# Each standard deviation at the upper end of its one-sided interval at this confidence.
CONFIDENCE = 0.95
MIN_TOLERANCE = 0.10
# A tolerance above this is no bound (a node at half speed passes): refused unless the site
# chooses one (--tolerance).
MAX_TOLERANCE = 0.50
NARROW_DF = 14   # fewer degrees of freedom than this: say how to narrow the tolerances


def chi2_quantile(p: float, df: float) -> float:
    """The x such that P(chi-square(DF) <= x) = P (bisection on the incomplete gamma)."""
    lo, hi = 0.0, max(10.0, 10.0 * df)
    while 1.0 - stats._gammq(df / 2, hi / 2) < p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if 1.0 - stats._gammq(df / 2, mid / 2) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2


def sd_upper(sd: float, df: int) -> float:
    """The upper end of the one-sided CONFIDENCE interval of a standard deviation SD learned
    from DF degrees of freedom (sd x sqrt(df / chi-square quantile at 1 - CONFIDENCE))."""
    if df <= 0 or sd <= 0:
        return sd
    return sd * math.sqrt(df / chi2_quantile(1 - CONFIDENCE, df))


def _quantile(xs, q):
    xs = sorted(xs)
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _sd(xs) -> float:
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0


def derive(samples: dict, worse: int) -> "dict | None":
    """A reference from SAMPLES ({node: [values of its checks]}) of a metric that is worse
    higher (WORSE +1) or lower (-1): {value, tolerance, spread, repeatability, nodes, checks,
    df}, or None when no node has a value. On the log scale: the value is the median of the
    nodes' medians; repeatability, the standard deviation of each node's checks around its
    own mean, pooled over the nodes with two or more (DF degrees of freedom); spread, the
    standard deviation of the nodes' means less what their own checks' noise puts in it
    (nodes - 1 degrees of freedom); the tolerance Z x sqrt(spread_u^2 + repeatability_u^2 x
    (1 + 1/n)) (_u: the upper end of each one's interval; n: the mean number of checks per
    node), as a fraction of the value, at least MIN_TOLERANCE."""
    per_node = {n: [float(v) for v in vs if v is not None and math.isfinite(v) and v > 0]
                for n, vs in samples.items()}
    per_node = {n: vs for n, vs in per_node.items() if vs}
    if not per_node:
        return None
    logs = [[math.log(v) for v in vs] for vs in per_node.values()]
    center = _quantile([_quantile(x, 50.0) for x in logs], 50.0)
    # pooled over the nodes: each node's squared deviations from its own mean, over the
    # degrees of freedom left (a robust MAD of three repeats ignores the one that strayed,
    # which is the check's noise all the same)
    ss = sum((x - sum(xs) / len(xs)) ** 2 for xs in logs if len(xs) > 1 for x in xs)
    df = sum(len(xs) - 1 for xs in logs if len(xs) > 1)
    rep = math.sqrt(ss / df) if df else 0.0
    n = sum(len(xs) for xs in logs) / len(logs)
    means = [sum(xs) / len(xs) for xs in logs]
    # the nodes' means vary by their spread and by rep^2/n of their own noise
    spread = math.sqrt(max(0.0, _sd(means) ** 2 - rep ** 2 / n)) if len(means) > 1 else 0.0
    sd = math.hypot(sd_upper(spread, len(means) - 1), sd_upper(rep, df) * math.sqrt(1 + 1 / n))
    t = Z * sd
    tolerance = max(MIN_TOLERANCE, math.exp(t) - 1 if worse > 0 else 1 - math.exp(-t))

    def rel(x):
        return round(math.exp(x) - 1, 4)
    return {"value": _sig(math.exp(center)), "tolerance": round(tolerance, 4),
            "spread": rel(spread), "repeatability": rel(rep), "nodes": len(per_node),
            "checks": sum(len(v) for v in per_node.values()), "df": df}


def chosen(ref: dict, tolerance: float) -> dict:
    """REF with the tolerance a site chose (--tolerance), recorded as chosen."""
    return {**ref, "tolerance": tolerance, "chosen": True}


def too_wide(refs: dict) -> "tuple | None":
    """(check, tolerance) of the widest reference of REFS whose tolerance is over
    MAX_TOLERANCE and not chosen by the site, or None."""
    wide = [(r["tolerance"], name) for name, r in refs.items()
            if r["tolerance"] > MAX_TOLERANCE and not r.get("chosen")]
    return (max(wide)[1], max(wide)[0]) if wide else None


def refusal(name: str, tolerance: float, ref: dict) -> str:
    """The one line of a reference refused: the check, the tolerance it would have had, and
    what fixes it."""
    per_node = round(ref["checks"] / max(1, ref["nodes"]))
    return (f"--save-reference: {name}'s tolerance would be {tolerance:.0%} (over "
            f"{MAX_TOLERANCE:.0%}: a node at half speed would pass; {ref['nodes']} node(s), "
            f"{ref['checks']} checks, repeatability {ref['repeatability']:.1%}): nothing "
            f"saved; --repeat {max(5, 2 * per_node)} or more, more nodes, or --tolerance F "
            "chosen by the site")


def narrowing_note(refs: dict) -> str:
    """'' or one line for whoever saved REFS ({check: reference}): learned from few degrees
    of freedom, their tolerances are wide, and what narrows them."""
    dfs = [r["df"] for r in refs.values() if r.get("df") is not None and "repeatability" in r]
    if not dfs or min(dfs) >= NARROW_DF:
        return ""
    df = min(dfs)
    if df == 0:
        return ("jostle: one check per node: the check's own noise is not known, so the "
                "tolerances hold the nodes' spread alone; --repeat 3 or more measures it "
                "(docs/check.md, References)")
    f = sd_upper(1.0, df)
    return (f"jostle: the tolerances were learned from {df} degree(s) of freedom (each "
            f"standard deviation taken at {f:.3g} x its estimate; {sd_upper(1.0, NARROW_DF):.2g}"
            f" x at {NARROW_DF}): each good node saved, or a larger --repeat, narrows them "
            "(docs/check.md, References)")


def _sig(x, digits=6):
    return float(f"{x:.{digits}g}")


def references_from_samples(nodes: dict, checks=MEASURED) -> dict:
    """{check: reference} from a class's saved samples NODES ({node: {check: [values]}})."""
    out = {}
    for name in checks:
        m = METRICS[name]
        ref = derive({n: s.get(name, []) for n, s in nodes.items()}, m.worse)
        if ref is not None:
            out[name] = {**ref, "unit": m.unit, "worse": "higher" if m.worse > 0 else "lower"}
    return out


def references_from_table(table) -> dict:
    """{check: reference} from node values (scan.node_values or scan.baseline_values: one
    row per node): one value per node, so the tolerance is the spread alone (and the floor)."""
    nodes = {}
    for host, row in table.iterrows():
        nodes[str(host)] = {c: [float(row[c])] for c in MEASURED if c in row and row[c] == row[c]}
    return references_from_samples(nodes)
