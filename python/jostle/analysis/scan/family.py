"""`jostle scan`'s tests and their one family (docs/scan.md, "How suspects are found").

Every judgement of a scan is a Test: a node's fingerprint metric against the allocation (and
against a baseline), a node's links out or in (their median) against the other nodes', a link
against the links, a cable against the links. Each has a one-sided p-value under its metric's
empirical null (scan_null) and a relative effect. Benjamini-Hochberg runs once over all of them
at --fdr: a test is flagged when it is selected and its effect is at least --min-effect (and
its robust z at least --threshold, when given). A metric with fewer than MIN_TEST values has no
null: its tests are flagged by the effect alone, and the scan says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ... import lazy
from .. import multiplicity
from . import null as scan_null
from . import working_sets as scan_sets

np = lazy.module("numpy")


@dataclass
class Test:
    kind: str            # what a flag names: node | link | cable
    where: str           # the host, SRC->DST, or the cable A-B
    metric: str
    value: float         # in UNIT (a node's links: their median)
    unit: str
    median: float        # the reference's centre, in UNIT
    z: float             # robust z, positive on the worse side
    p: float             # one-sided, under the null; NaN: judged by the effect alone
    effect: float        # times worse than the reference, minus 1
    run: str = ""
    label: str = ""
    reference: str = "allocation"
    detail: dict = field(default_factory=dict)
    q: float = math.nan  # Benjamini-Hochberg's adjusted p
    flagged: bool = False
    passno: int = 1
    # what a second measurement needs to be judged the same way
    null: object = None  # scan_null.Null (or None: the effect alone)
    worse: int = 1
    ref_log: float = math.nan
    links: tuple = ()    # (src, dst) of the links the value is made of
    link_metric: str = ""
    offset: float = 0.0  # a link's: the log its nodes make it (its value is judged beyond)
    u: float = 0.0       # the value's own standard uncertainty on the log scale

    def evidence(self) -> dict:
        def num(x, nd=6):
            return None if x is None or not math.isfinite(x) else round(float(x), nd)
        out = {"metric": self.metric, "value": num(self.value), "unit": self.unit,
               "median": num(self.median), "z": num(self.z, 2),
               "p": None if not math.isfinite(self.p) else float(f"{self.p:.3g}"),
               "q": None if not math.isfinite(self.q) else float(f"{self.q:.3g}"),
               "effect": num(self.effect, 3), "run": self.run, "label": self.label,
               "reference": self.reference, "pass": self.passno}
        out.update(self.detail)
        return out


EFFECT_ALONE = 0.25   # a test judged by its effect alone: at least this much worse


def decide(tests, fdr, min_effect, threshold=None) -> float:
    """Flags TESTS in place (one Benjamini-Hochberg family at FDR over those with a p-value;
    the others by the effect alone, at least EFFECT_ALONE); returns the family's p-value
    cut-off (0: nothing selected)."""
    ps = np.array([t.p for t in tests], dtype=float)
    rejected, adjusted = multiplicity.bh_rejected(ps, fdr)
    cut = float(ps[rejected].max()) if rejected.any() else 0.0
    for t, r, a in zip(tests, rejected, adjusted):
        t.q = float(a)
        big = math.isfinite(t.effect) and t.effect >= min_effect
        if math.isfinite(t.p):
            t.flagged = bool(r) and big and (threshold is None or t.z >= threshold)
        else:
            t.flagged = big and alone(t)
    return cut


def alone(t) -> bool:
    """Whether T, judged by its effect alone, is at least EFFECT_ALONE worse, beyond its own
    95% uncertainty (a ratio under load from few samples)."""
    u = t.u if math.isfinite(t.u) else 0.0
    return math.isfinite(t.effect) and t.effect > -1 and \
        math.exp(math.log1p(t.effect) - 1.96 * u) - 1 >= EFFECT_ALONE


def unreachable(tests, fdr) -> list:
    """The metrics whose null cannot reach the family's first bar (FDR over the tests with a
    p-value: Bonferroni's, where Benjamini-Hochberg starts): their tests lose their p-value
    and are judged by the effect alone (issue 45: 5 to 16 nodes, a spread from that few
    values). The names, sorted."""
    m = sum(math.isfinite(t.p) for t in tests)
    out, reach = set(), {}      # one answer a null: a metric's tests share theirs
    for t in tests:
        if math.isfinite(t.p) and t.null is not None:
            if id(t.null) not in reach:
                reach[id(t.null)] = t.null.reaches(fdr / m)
            if not reach[id(t.null)]:
                t.p = math.nan
                out.add(t.metric)
    return sorted(out)


def passes(t, cut, min_effect, threshold=None) -> bool:
    """Whether T, judged again (a new value, or fewer links), is still flagged at the
    family's cut-off CUT."""
    big = math.isfinite(t.effect) and t.effect >= min_effect
    if not math.isfinite(t.p):
        return big and alone(t)
    return t.p <= cut and big and (threshold is None or t.z >= threshold)


def judge_values(logs, null, worse, ref_log, u=None):
    """(z, p, effect) of LOGS under NULL (None: the effect alone, against REF_LOG)."""
    x = np.asarray(logs, dtype=float)
    eff = scan_null.effect(x, ref_log, worse)
    if null is None:
        return np.full(x.shape, math.nan), np.full(x.shape, math.nan), eff
    return null.z(x, worse, u), null.p(x, worse, u), eff


def node_tests(values, metrics, runs_of, reference="allocation", base=None) -> tuple:
    """(tests, {host: {metric: why not judged}}) of each node's fingerprint: VALUES (one row
    per host, a column per metric, METRIC_u for a ratio's uncertainty, and the working sets)
    against the allocation's own values, or against BASE (a baseline's node_values) with
    REFERENCE its name; a metric that depends on a working set only among the nodes measured
    with the same (scan_sets.split). METRICS: scan.FINGERPRINT."""
    out, skipped = [], {}
    against = reference.removeprefix("baseline ")
    for m in metrics:
        groups, why = scan_sets.split(values, m, base, against)
        for h, text in why.items():
            skipped.setdefault(h, {})[m.name] = text
        for hosts, ref in groups:
            out += _metric_tests(values.loc[hosts], m, runs_of, reference, ref)
    return out, skipped


def _metric_tests(values, m, runs_of, reference, base) -> list:
    out = []
    col = values[m.name].to_numpy(dtype=float)
    u = values[m.name + "_u"].to_numpy(dtype=float) if m.degradation else None
    ref = col if base is None else base[m.name].to_numpy(dtype=float)
    if not np.isfinite(ref).any():
        return out
    x, r = scan_null.logs_of(col), scan_null.logs_of(ref)
    null = scan_null.fit(r, m.worse, symmetric=True)
    # every node at once against the null (a scan of 1 000 nodes: 7 000 tests)
    zs, ps, effs = judge_values(x, null, m.worse, null.center, u) \
        if null is not None else (None,) * 3
    size = values[m.working_set] if m.working_set in values else None
    for i, host in enumerate(values.index):
        if not math.isfinite(x[i]):
            continue
        if null is None:   # too few nodes: the effect against the others' median
            others = np.delete(r, i) if base is None else r
            others = others[np.isfinite(others)]
            if not others.size:
                continue
            ref_log = float(np.median(others))
            z, p, eff = math.nan, math.nan, float(scan_null.effect(x[i], ref_log, m.worse))
        else:
            ref_log = null.center
            z, p, eff = float(zs[i]), float(ps[i]), float(effs[i])
        sized = size is not None and math.isfinite(size.iloc[i])
        out.append(Test("node", host, m.name, float(col[i]), m.unit, math.exp(ref_log),
                        z, p, eff, runs_of.get((host, m.benchmark), ""), m.label, reference,
                        {m.working_set: int(size.iloc[i])} if sized else {},
                        null=null, worse=m.worse, ref_log=ref_log,
                        u=float(u[i]) if u is not None else 0.0))
    return out


def rejudge_node(t, row) -> "Test | None":
    """A fingerprint test T judged again on a new ROW of node_values (its value, a ratio's
    uncertainty, its working sets), against the same null; None when measured with another
    working set than the first time (its share could not build it again)."""
    again = scan_sets.of_row(row, t.detail)
    if not scan_sets.agree(t.detail, again):
        return None
    u = row.get(t.metric + "_u")
    x = scan_null.logs_of([row[t.metric]])
    z, p, eff = judge_values(x, t.null, t.worse, t.ref_log, None if u is None else [u])
    return Test(t.kind, t.where, t.metric, float(row[t.metric]), t.unit, t.median,
                float(z[0]), float(p[0]), float(eff[0]), t.run, t.label, t.reference,
                again, passno=2, null=t.null, worse=t.worse, ref_log=t.ref_log)
