"""A class's reference for `jostle check` (docs/check.md, "References"): from the values good
nodes measured, the value a check is judged against and its tolerances, or the refusal of a
reference that could not tell a bad node from a good one.

On the log scale a check of a good node is the class's centre, plus where that node sits in
the class (the nodes' spread), plus its own noise from check to check (the repeatability,
with the tails its checks show). The tolerance spends the site's false-drain budget (at most
one healthy node drained per NODE_YEARS node-years, a check every INTERVAL seconds; shared
equally by the class's checks) through the retest rule of `--slurm` (check_budget), each
standard deviation taken at the upper end of its 95% interval for the degrees of freedom it
was learned from, so that a reference learned from few values is wide by construction, and
no wider than its data say. A node whose own checks the class holds is judged against their
median with the narrower own_tolerance (its place in the class is known)."""

from __future__ import annotations

import math

from . import check_budget, stats
from .check import MEASURED, METRICS

# Each standard deviation at the upper end of its one-sided interval at this confidence.
CONFIDENCE = 0.95
MIN_TOLERANCE = 0.10
# A tolerance above this is no bound (a node at half speed passes): refused unless the site
# chooses one (--tolerance).
MAX_TOLERANCE = 0.50
NARROW_DF = 14   # fewer degrees of freedom than this: say how to narrow the tolerances


def sd_upper(sd: float, df: int) -> float:
    """The upper end of the one-sided CONFIDENCE interval of a standard deviation SD learned
    from DF degrees of freedom (sd x sqrt(df / chi-square quantile at 1 - CONFIDENCE))."""
    if df <= 0 or sd <= 0:
        return sd
    return sd * math.sqrt(df / stats.chi2_quantile(1 - CONFIDENCE, df))


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


def derive(samples: dict, worse: int, budget: float = 1 / check_budget.NODE_YEARS,
           interval: float = check_budget.INTERVAL_S, error: float = 0.0) -> "dict | None":
    """A reference from SAMPLES ({node: [values of its checks]}) of a metric that is worse
    higher (WORSE +1) or lower (-1), its healthy nodes drained at most BUDGET a node-year
    with a check every INTERVAL seconds: {value, tolerance, own_tolerance, spread,
    repeatability, tails, nodes, checks, df}, or None when no node has a value. On the log
    scale: the value is the median of the nodes' medians; repeatability, the standard
    deviation of each node's checks around its own mean, pooled over the nodes with two or
    more (DF degrees of freedom); tails, the t degrees of freedom of those deviations
    (check_budget.fit_tails: the heaviest within the likelihood's 90% interval); spread, the
    standard deviation of the nodes' means less what their own checks' noise puts in it
    (nodes - 1 degrees of freedom). The tolerance is check_budget.tolerance for a node judged
    against the class (u: the spread), own_tolerance for a node judged against the median of
    its own saved checks (u: that median's error); each standard deviation at the upper end
    of its interval (sd_upper), each at least MIN_TOLERANCE as a fraction of the value. ERROR:
    the checks' own standard error on the log scale (their samples' 95% intervals), the floor
    of the repeatability and of the tails' scale: two checks that agree by chance within it
    (one degree of freedom) do not make a narrow bound."""
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
    rep = max(error, math.sqrt(ss / df) if df else 0.0)
    n = sum(len(xs) for xs in logs) / len(logs)
    means = [sum(xs) / len(xs) for xs in logs]
    # the nodes' means vary by their spread and by rep^2/n of their own noise
    spread = math.sqrt(max(0.0, _sd(means) ** 2 - rep ** 2 / n)) if len(means) > 1 else 0.0
    nu, scale = check_budget.fit_tails(check_budget.residuals(logs))
    # the t's scale whose standard deviation is the floor (t2's has none: the floor itself)
    scale = max(scale, error * (math.sqrt((nu - 2) / nu) if nu > 2 else 1.0))
    scale_u, s_u = sd_upper(scale, df), sd_upper(spread, len(means) - 1)
    own_err = check_budget.median_error(scale_u, nu, n)

    def fraction(t):
        return max(MIN_TOLERANCE, math.exp(t) - 1 if worse > 0 else 1 - math.exp(-t))

    def rel(x):
        return round(math.exp(x) - 1, 4)
    tol = check_budget.tolerance(budget, s_u, scale_u, nu, interval)
    own = check_budget.tolerance(budget, own_err, scale_u, nu, interval)
    return {"value": _sig(math.exp(center)), "tolerance": round(fraction(tol), 4),
            "own_tolerance": round(fraction(own), 4), "spread": rel(spread),
            "repeatability": rel(rep), "tails": nu,
            "scale": round(scale, 6), "error": round(error, 6), "nodes": len(per_node),
            "checks": sum(len(v) for v in per_node.values()), "df": df}


def chosen(ref: dict, tolerance: float) -> dict:
    """REF with the tolerance a site chose (--tolerance), recorded as chosen."""
    return {**ref, "tolerance": tolerance, "own_tolerance": tolerance, "chosen": True}


def own_references(refs: dict, saved: "dict | None") -> dict:
    """REFS ({check: reference}) for a node whose SAVED checks ({check: [values]}) its class
    holds: each check it has values of judged against their median, with own_tolerance (the
    node's place in the class is known, so the class's spread is not in its bound)."""
    out = dict(refs)
    for name, ref in refs.items():
        vals = [v for v in (saved or {}).get(name) or [] if isinstance(v, (int, float)) and v > 0]
        if vals and "own_tolerance" in ref:
            centre = math.exp(_quantile([math.log(v) for v in vals], 50.0))
            out[name] = {**ref, "value": _sig(centre), "tolerance": ref["own_tolerance"],
                         "own": True}
    return out


def too_wide(refs: dict) -> "tuple | None":
    """(check, tolerance) of the widest reference of REFS whose tolerance is over
    MAX_TOLERANCE and not chosen by the site, or None."""
    wide = [(r["tolerance"], name) for name, r in refs.items()
            if r["tolerance"] > MAX_TOLERANCE and not r.get("chosen")]
    return (max(wide)[1], max(wide)[0]) if wide else None


# The most checks of one node a refusal proposes: beyond, more checks will not do.
MAX_REPEAT = 200


def checks_needed(ref: dict, tolerance: float) -> "int | None":
    """How many checks of one node would bring TOLERANCE under MAX_TOLERANCE at REF's
    repeatability (its df's upper-bound factor, sd_upper, giving way to a larger df's; the
    tails as they are), or None where MAX_REPEAT would not: the noise itself is too large."""
    if ref.get("nodes") != 1 or not ref.get("df"):
        return None
    higher = ref.get("worse", "higher") == "higher"
    now = math.log1p(tolerance) if higher else -math.log1p(-min(tolerance, 1 - 1e-9))
    goal = math.log1p(MAX_TOLERANCE) if higher else -math.log1p(-MAX_TOLERANCE)
    factor = sd_upper(1.0, ref["df"])
    return next((n for n in range(ref["df"] + 2, MAX_REPEAT + 1)
                 if now * sd_upper(1.0, n - 1) / factor <= goal), None)


def refusal(name: str, tolerance: float, ref: dict) -> str:
    """The one line of a reference refused: the check, the tolerance it would have had, and
    what fixes it: the checks of one node that would (at its repeatability), or, where no
    number of them would, more nodes or the site's choice."""
    per_node = round(ref["checks"] / max(1, ref["nodes"]))
    more = f"--repeat {max(5, 2 * per_node)} or more, more nodes"
    # from fewer than 5 checks the repeatability itself is too rough to say how many
    if (ref.get("df") or 0) >= 4:
        need = checks_needed(ref, tolerance)
        more = (f"--repeat {max(5, 2 * per_node, need)} or more (at this repeatability), "
                "more nodes" if need else
                f"more checks of this node would not do at this repeatability (under "
                f"{MAX_TOLERANCE:.0%} from {MAX_REPEAT} takes a check that varies less); "
                "more nodes")
    return (f"--save-reference: {name}'s tolerance would be {tolerance:.0%} (over "
            f"{MAX_TOLERANCE:.0%}: a node at half speed would pass; {ref['nodes']} node(s), "
            f"{ref['checks']} checks, repeatability {ref['repeatability']:.1%}): nothing "
            f"saved; {more}, or --tolerance F chosen by the site")


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


def references_from_samples(nodes: dict, checks=MEASURED,
                            node_years: float = check_budget.NODE_YEARS,
                            interval: float = check_budget.INTERVAL_S) -> dict:
    """{check: reference} from a class's saved samples NODES ({node: {check: [values],
    "errors": {check: [their standard errors]}}}),
    the budget of one healthy node drained per NODE_YEARS shared by the checks measured."""
    have = [c for c in checks if any(s.get(c) for s in nodes.values())]
    out = {}
    for name in checks:
        m = METRICS[name]
        # the checks' own standard errors pooled over every node that kept them (rms)
        errs = [e for s in nodes.values() for e in ((s.get("errors") or {}).get(name) or [])]
        ref = derive({n: s.get(name, []) for n, s in nodes.items()}, m.worse,
                     1 / (node_years * max(1, len(have))), interval,
                     math.sqrt(sum(e * e for e in errs) / len(errs)) if errs else 0.0)
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
