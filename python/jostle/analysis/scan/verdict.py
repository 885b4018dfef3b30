"""`jostle scan`'s verdict on its campaign: each node, link and cable against the allocation
(docs/scan.md, "How suspects are found"): each value (fingerprint.py) against an empirical
null of its metric estimated from the allocation itself (null.py), on the log scale,
one-sided on the worse side; every test of the scan in one Benjamini-Hochberg family at --fdr
(judge.py); a node by the median of its links out and in, a cable of the fabric by the links
that cross it, and the smallest set of nodes and cables that explains the flagged links
(links.py). A value is flagged only when selected and at least --min-effect worse than its
reference; below 5 nodes the effect alone decides, and the scan says so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ... import lazy
from .. import multiplicity
from . import links as scan_links
from . import null as scan_null
from .classes import by_class
from .fingerprint import FINGERPRINT
from .family import EFFECT_ALONE, decide, node_tests, rejudge_node, unreachable
from .links import LINK_METRICS

np = lazy.module("numpy")
pd = lazy.module("pandas")

@dataclass
class Finding:
    kind: str          # unreachable | node | link | cable
    where: str         # a host, SRC->DST, or the cable A-B
    evidence: list     # [{metric, value, unit, median, z, p, q, effect, run, label, …}]
    z: float
    p: float = math.nan
    tests: list = field(default_factory=list, repr=False)   # the family.Tests behind it
    drain: bool = True   # a node's: in the drain script (hold_back)

    def to_dict(self, rank) -> dict:
        def num(x, nd):
            return None if x is None or not math.isfinite(x) else round(float(x), nd)
        return {"rank": rank, "kind": self.kind,
                "node": self.where if self.kind in ("node", "unreachable") else None,
                "link": self.where if self.kind == "link" else None,
                "cable": self.where if self.kind == "cable" else None,
                "z": num(self.z, 2),
                "drain": self.kind in ("node", "unreachable") and self.drain,
                "p": None if not math.isfinite(self.p) else float(f"{self.p:.3g}"),
                "evidence": self.evidence}


@dataclass
class Verdict:
    table: pd.DataFrame          # node values, METRIC_z (and METRIC_zb against a baseline)
    links: "pd.DataFrame | None"  # the links, METRIC_z and METRIC_flag
    tests: list                  # every test of the scan
    findings: list               # Findings, not ranked (the unreachable apart)
    ctx: object = None           # scan_links.LinkContext
    cut: float = 0.0             # the family's p-value cut-off
    drain_cut: float = 0.0       # Holm's at the same level: what a node is drained at
    notes: list = field(default_factory=list)
    screened: list = field(default_factory=list)   # links to measure again (screen)
    # {host: {METRIC or METRIC_zb: why}}: not judged against the allocation (a baseline),
    # measured with another working set than the nodes it would be compared with
    skipped: dict = field(default_factory=dict)


LINK_EVIDENCE = 8   # flagged links kept in a node's or a cable's evidence


def judge(values, runs_of, fdr, min_effect, threshold=None, links=None, hosts=(), link_run="",
          link_metrics=None, fabric=None, baseline=None, against="", classes=None) -> Verdict:
    """Every test of a scan in one family: VALUES (node_values) against the allocation and
    BASELINE (a baseline's node_values, named AGAINST); LINKS (link_values over HOSTS, from
    LINK_RUN) by node, cable (FABRIC) and link; flagged at FDR and MIN_EFFECT (THRESHOLD: a
    robust z floor, or None). CLASSES: {host: class}, the node classes a site knows (newer
    firmware, another CPU): each class's fingerprints against its own null."""
    tests, skipped = [], {}
    for members in by_class(values.index, classes):
        more, why = node_tests(values.loc[members], FINGERPRINT, runs_of)
        tests += more
        skipped.update(why)
    if baseline is not None and not baseline.empty:
        more, why = node_tests(values, FINGERPRINT, runs_of, f"baseline {against}", baseline)
        tests += more
        for h, by_metric in why.items():
            skipped.setdefault(h, {}).update({m + "_zb": w for m, w in by_metric.items()})
    ctx = None
    if links is not None and len(links):
        more, ctx = scan_links.link_tests(links, list(hosts), link_run, min_effect,
                                          link_metrics, fabric)
        tests += more
    weak = unreachable(tests, fdr)
    cut = decide(tests, fdr, min_effect, threshold)
    findings, notes = _assemble(tests, ctx, cut, min_effect, threshold)
    notes += unjudged_notes(skipped)
    n = len(hosts or values.index)
    alone = max(min_effect, EFFECT_ALONE)
    if 0 < n < scan_null.MIN_TEST:
        notes.append(f"{n} nodes: too few to estimate the allocation's spread; judged by the "
                     f"relative effect alone (at least {alone:g} worse), no test")
    elif weak:
        notes.append(f"{n} nodes: too few for a test of {', '.join(weak)} to reach --fdr "
                     f"{fdr:g} over {len(tests)} tests (a value {scan_null.Z_REACH:g} spreads "
                     f"out would not be selected); judged by the relative effect alone (at "
                     f"least {alone:g} worse)")
    return Verdict(_node_table(values, tests), _link_table(links, tests), tests, findings, ctx,
                   cut, multiplicity.holm_cut([t.p for t in tests], fdr), notes,
                   screen(tests, fdr, min_effect), skipped)


def unjudged_notes(skipped) -> list:
    """One line per node and reason: the metrics SKIPPED ({host: {column: why}}: METRIC
    against the allocation, METRIC_zb against a baseline) leaves unjudged, and why."""
    out = []
    for host, by_col in skipped.items():
        why = {}
        for col, text in by_col.items():
            why.setdefault(text, []).append(col.removesuffix("_zb"))
        out += [f"{host}: {', '.join(cols)} {text}" for text, cols in why.items()]
    return out


SCREEN_MAX = 64   # links measured again for their own repeat, at most (the smallest p first)


def screen(tests, fdr, min_effect) -> list:
    """The links not flagged whose p-value is at most sqrt(FDR / m), m the tests with one, and
    effect at least MIN_EFFECT: measured again, each is judged by both measurements
    (second_pass: max(p1, p2)^2, a p-value when the two are independent, as a pair's draws
    of two passes are). A link slow by a fault is slow twice; a t3 draw far out once, not:
    so a link at 0.5x among heavy-tailed ones, named in 0 of 150 scans on one measurement
    (issue 45), can reach the family's bar."""
    m = sum(math.isfinite(t.p) for t in tests)
    if not m:
        return []
    bar = math.sqrt(fdr / m)
    out = [t for t in tests if t.kind == "link" and not t.flagged and math.isfinite(t.p)
           and t.p <= bar and math.isfinite(t.effect) and t.effect >= min_effect]
    return sorted(out, key=lambda t: t.p)[:SCREEN_MAX]


def _assemble(tests, ctx, cut, min_effect, threshold) -> tuple:
    chosen, away = scan_links.explain(tests, ctx, cut, min_effect, threshold) if ctx else ([], {})
    named = {}
    for t in tests:
        if t.flagged and t.kind == "node" and not t.links:
            named.setdefault(("node", t.where), []).append(t)
    cover = {}
    for t in chosen:
        named.setdefault((t.kind, t.where), []).append(t)
        for k in t.links:
            cover.setdefault((k, t.link_metric), (t.kind, t.where))
    lone = {}
    for t in tests:
        if not (t.flagged and t.kind == "link"):
            continue
        owner = cover.get((t.links[0], t.link_metric))
        ends = [("node", h) for h in t.links[0] if ("node", h) in named]
        if owner is None and ends:
            owner = ends[0]
        (named.setdefault(owner, []) if owner else lone.setdefault(t.where, [])).append(t)
    findings = [_finding(kind, where, ts) for (kind, where), ts in named.items()]
    findings += [_finding("link", where, ts) for where, ts in lone.items()]
    notes = [f"{where}: its slow links are explained by {', '.join(by)}"
             for where, by in away.items() if ("node", where) not in named and by]
    return findings, notes


def _finding(kind, where, tests) -> Finding:
    own = [t for t in tests if t.kind != "link" or kind == "link"]
    links = [t for t in tests if t.kind == "link" and kind != "link"]
    links.sort(key=lambda t: -t.z if math.isfinite(t.z) else 0)
    ev = [t.evidence() for t in own + links[:LINK_EVIDENCE]]
    if len(links) > LINK_EVIDENCE:
        ev.append({"metric": "links", "value": len(links), "unit": "", "median": None,
                   "z": None, "run": links[0].run, "label": f"{len(links) - LINK_EVIDENCE} "
                   "more flagged links of it, not listed", "reference": "allocation",
                   "pass": 1})
    zs = [t.z for t in tests if math.isfinite(t.z)]
    ps = [t.p for t in tests if math.isfinite(t.p)]
    return Finding(kind, where, ev, max(zs) if zs else math.nan, min(ps) if ps else math.nan,
                   list(own + links))


def _node_table(values, tests) -> pd.DataFrame:
    """VALUES with each test's z beside its value (filled as arrays: a cell at a time through
    .loc took 3 of a 1000-node judgement's 5 s)."""
    table = values.copy()
    at = {h: i for i, h in enumerate(table.index)}
    cols = {m.name + "_z": np.full(len(table), math.nan) for m in FINGERPRINT}
    for t in tests:
        if t.kind == "node" and not t.links and t.where in at:
            col = t.metric + ("_z" if t.reference == "allocation" else "_zb")
            cols.setdefault(col, np.full(len(table), math.nan))[at[t.where]] = t.z
    for col, z in cols.items():
        table[col] = z
    return table


def _link_table(links, tests):
    if links is None:
        return None
    out = links.copy()
    for metric, _, _ in LINK_METRICS:
        out[metric + "_z"], out[metric + "_flag"] = math.nan, False
    at = {(s, d): i for i, (s, d) in enumerate(zip(out.src, out.dst))}
    zcol = {m: out[m + "_z"].to_numpy(dtype=float).copy() for m, _, _ in LINK_METRICS}
    fcol = {m: out[m + "_flag"].to_numpy(dtype=bool).copy() for m, _, _ in LINK_METRICS}
    for t in tests:
        if t.kind == "link" and t.links[0] in at:
            i = at[t.links[0]]
            zcol[t.link_metric][i], fcol[t.link_metric][i] = t.z, t.flagged
    for m, _, _ in LINK_METRICS:
        out[m + "_z"], out[m + "_flag"] = zcol[m], fcol[m]
    return out


def second_pass(verdict, fdr, min_effect, threshold=None, values=None, links=None,
                runs_of=None, link_run="") -> list:
    """The findings of VERDICT judged again on a second measurement: VALUES (node_values of
    the fingerprints measured again, from RUNS_OF {(host, benchmark): run file}) and LINKS
    (the links measured again, in LINK_RUN), each test behind a finding the same way as the
    first time, against the first pass's nulls; one family at FDR. A finding is kept when a
    test behind it is flagged again on the same metric, with both passes as its evidence,
    each citing the run it was measured in; one with nothing measured again is kept as it
    was."""
    bench_of = {m.name: m.benchmark for m in FINGERPRINT}
    logs = {}
    if links is not None and len(links):
        for m, _, _ in LINK_METRICS:
            if m in links:
                x = scan_null.logs_of(links[m])
                logs[m] = {(s, d): v for s, d, v in zip(links.src, links.dst, x)
                           if math.isfinite(v)}
    pairs = []
    for f in verdict.findings:
        for t in f.tests:
            new = None
            if t.kind == "node" and not t.links and values is not None \
                    and t.where in values.index and t.metric in values:
                new = rejudge_node(t, values.loc[t.where])   # None: another working set
                if new is not None:
                    new.run = str((runs_of or {}).get((t.where, bench_of.get(t.metric)),
                                                      new.run))
            elif t.links and t.link_metric in logs:
                new = scan_links.rejudge(t, verdict.ctx, logs[t.link_metric])
                if new is not None and link_run:
                    new.run = str(link_run)
            if new is not None and math.isfinite(new.value):
                if not math.isfinite(t.p):   # judged by its effect alone the first time
                    new.p = math.nan
                pairs.append((f, new))
    decide([n for _, n in pairs], fdr, min_effect, threshold)
    repeated = _repeats(verdict, logs, fdr, min_effect, threshold, link_run)
    again = {}
    for f, n in pairs:
        again.setdefault(id(f), []).append(n)
    kept = []
    for f in verdict.findings:
        second = again.get(id(f))
        if second is None:
            kept.append(f)
        elif any(n.flagged for n in second):
            f.evidence = f.evidence + [n.evidence() for n in second
                                       if n.kind != "link" or f.kind == "link"][:2 * LINK_EVIDENCE]
            kept.append(f)
    return kept + repeated


def _repeats(verdict, logs, fdr, min_effect, threshold, link_run) -> list:
    """Findings of the screened links (screen) by both their measurements: max(p1, p2)^2 in
    place of p1 in the scan's family, Benjamini-Hochberg again at FDR; named when selected
    and at least MIN_EFFECT worse both times."""
    both = {}
    for t in verdict.screened:
        new = scan_links.rejudge(t, verdict.ctx, logs.get(t.link_metric, {}))
        if new is not None and math.isfinite(new.p):
            new.run = str(link_run) if link_run else new.run
            both[id(t)] = (new, max(t.p, new.p) ** 2)
    if not both:
        return []
    ps = [both[id(t)][1] if id(t) in both else t.p for t in verdict.tests]
    rejected = multiplicity.bh_rejected(ps, fdr)[0]
    out = []
    for t, r in zip(verdict.tests, rejected):
        if id(t) not in both or not r:
            continue
        new, p = both[id(t)]
        if min(t.effect, new.effect) >= min_effect and \
                (threshold is None or min(t.z, new.z) >= threshold):
            f = _finding("link", t.where, [t])
            f.p, f.evidence = p, f.evidence + [new.evidence()]
            f.evidence[0]["label"] += "; judged with its repeat: max(p1, p2)^2 = " + f"{p:.3g}"
            out.append(f)
    return out


def rank(unreachable: dict, findings: list) -> list:
    """Suspects, worst first: unreachable nodes, then by their smallest p-value (their
    largest robust z where judged by the effect alone)."""
    out = [Finding("unreachable", h, [{"metric": "reachable", "value": None, "unit": "",
                                       "median": None, "z": None, "run": run, "label": why}],
                   math.inf) for h, (why, run) in unreachable.items()]
    return out + sorted(findings, key=lambda f: (f.p if math.isfinite(f.p) else 1.0,
                                                 -(f.z if math.isfinite(f.z) else 0.0)))


def hold_back(findings, verdict) -> list:
    """FINDINGS with each node's drain decided: a node is named when the scan's false
    discovery rate selects it, and drained only when Holm's family-wise test at the same level
    does too (or, below 5 nodes, by its effect alone). A healthy allocation then has a node
    drained in at most --fdr of its scans; the discoveries of one fault (a cable's slow pairs)
    no longer lower the bar of Benjamini-Hochberg for a node that is merely on the slow side
    of the spread (docs/scan.md, "Named, drained")."""
    for f in findings:
        f.drain = f.kind != "node" or not math.isfinite(f.p) or f.p <= verdict.drain_cut
    return findings


def drain_lines(suspects) -> list:
    """`scontrol update` lines that drain each node flagged to be drained (links and cables
    name no node to drain; a node held back by hold_back is named, not drained)."""
    out = []
    for s in suspects:
        if s.kind in ("link", "cable") or not s.drain:
            continue
        what = "unreachable" if s.kind == "unreachable" else \
            ", ".join(f"{e['metric']} z={e['z']}" for e in s.evidence[:3])
        reason = re.sub(r"[^A-Za-z0-9 .,:=_+-]", "", f"jostle scan: {what}")[:200]
        out.append(f'scontrol update NodeName={s.where} State=DRAIN Reason="{reason}"')
    return out
