"""`jostle scan`'s judgement of the links (docs/scan.md, "A node by its links, a cable by its
pairs"): from the links the shift run measured, the tests of

  * each node by its links: the median of its links out (and of its links in), against the
    other nodes' medians; a degraded NIC or cable makes a row or a column of the matrix;
  * each cable of the fabric (a topology.conf): the median of the links whose route crosses
    it, against the links' null (the standard error of a median of that many);
  * each link, against the links.

and the smallest set of nodes and cables that explains the flagged ones: in the order of
their p-values, each is judged again on its links that none chosen before explains, and kept
only if still flagged (a leaf's bad uplink slows the links of every node under it: chosen
first, it explains them, and the nodes judged on their other links are healthy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ... import lazy
from . import null as scan_null
from .family import Test, judge_values, passes

np = lazy.module("numpy")
pd = lazy.module("pandas")

LINK_METRICS = (("latency", "us", +1), ("bandwidth", "MB/s", -1))
SLOW_Z = 2.0          # a link counted slow in a cable's evidence: z >= this and the effect
SLOWEST = 6           # a node's slowest links kept in its evidence
MIN_LINKS = 3         # links a side from which a node's median is its own effect on a link


@dataclass
class LinkContext:
    """What judging the links found, for explaining and for a second measurement: each
    metric's log values by link, and its null and centre."""
    logs: dict = field(default_factory=dict)      # metric -> {(src, dst): log}
    pair_null: dict = field(default_factory=dict)  # metric -> Null or None
    centre: dict = field(default_factory=dict)     # metric -> log median of the links
    routes: dict = field(default_factory=dict)     # (src, dst) -> [cable names]
    tau: dict = field(default_factory=dict)        # metric -> the spread between cables


def cable_name(child, parent) -> str:
    return f"{child}-{parent}"


def link_tests(links, hosts, run, min_effect, metrics=None, fabric=None) -> tuple:
    """(tests, LinkContext) of LINKS (src, dst, latency, bandwidth; hosts as in HOSTS) of run
    file RUN. METRICS: the LINK_METRICS names judged (default all); FABRIC: a
    records.fabric.Fabric, whose cables are judged too."""
    ctx, tests = LinkContext(), []
    few = len(hosts) < scan_null.MIN_TEST
    src, dst = links.src.to_numpy(), links.dst.to_numpy()
    if fabric is not None:
        index = fabric.index()
        ctx.routes = {(s, d): [cable_name(c, p) for c, p, _ in fabric.route(s, d, index[d])]
                      for s, d in zip(src, dst) if s in fabric.leaf and d in fabric.leaf}
    for metric, unit, worse in LINK_METRICS:
        if metrics is not None and metric not in metrics or metric not in links:
            continue
        x = scan_null.logs_of(links[metric])
        ok = np.isfinite(x)
        if not ok.any():
            continue
        ctx.logs[metric] = {(s, d): v for s, d, v, k in zip(src, dst, x, ok) if k}
        g = float(np.median(x[ok]))
        expect = _expected(x, src, dst, g)
        resid = x - expect
        pnull = None if few else scan_null.fit(resid[ok], worse)
        ctx.pair_null[metric], ctx.centre[metric] = pnull, g
        # the links floor the nodes' spread where enough nodes make them (FLOOR_MIN_NODES):
        # among fewer, one slow node's links are much of them and would hide it
        least = node_spread(x[ok], resid[ok], worse) if len(hosts) >= FLOOR_MIN_NODES else 0.0
        tests += _node_tests(ctx, metric, unit, worse, hosts, src, dst, x, run, few, least)
        z, p, eff = judge_values(resid, pnull, worse, 0.0)
        for i in np.flatnonzero(ok):
            s, d = src[i], dst[i]
            tests.append(Test("link", f"{s}->{d}", metric, math.exp(x[i]), unit,
                              math.exp(expect[i]), float(z[i]), float(p[i]), float(eff[i]),
                              str(run), f"link {s}->{d}, against what the other links of its "
                              "two nodes make it", null=pnull, worse=worse, ref_log=0.0,
                              links=((s, d),), link_metric=metric, offset=float(expect[i])))
        if fabric is not None:
            tests += _cable_tests(ctx, metric, unit, worse, run, min_effect, few)
    return tests, ctx


def _expected(x, src, dst, g):
    """What each link's log would be from its two nodes alone: the median of its source's
    links out and of its destination's links in, each as a difference from all links' median
    G (one step of Tukey's median polish). A link of a node with fewer than MIN_LINKS links a
    side is expected at G: its node's median would be the link itself."""
    ok = np.isfinite(x)
    frame = pd.DataFrame({"s": src[ok], "d": dst[ok], "x": x[ok]})
    out = frame.groupby("s").x.agg(["median", "size"])
    inn = frame.groupby("d").x.agg(["median", "size"])

    def side(stat, keys):
        m = stat["median"].where(stat["size"] >= MIN_LINKS, g) - g
        return m.reindex(keys).fillna(0.0).to_numpy()
    return g + side(out, src) + side(inn, dst)


# At 6 nodes the links of a node slow on every link out were a sixth of them and floored the
# nodes' spread past it (it went unnamed); at 16 the floor keeps a clean scan from draining.
FLOOR_MIN_NODES = 12


def worse_spread(logs, worse) -> float:
    """The spread of LOGS on their worse side: the median distance of the values beyond
    their median, as a normal's sigma (0 without any)."""
    side = worse * (logs - np.median(logs))
    side = side[side > 0]
    return float(np.median(side)) / scan_null.Q75_NORMAL if side.size else 0.0


def node_spread(logs, resid, worse) -> float:
    """How much of the links' spread on the worse side their nodes make: that of the links'
    LOGS less that of their RESIDuals (what the link adds beyond its two nodes), in
    quadrature. The floor of the node medians' null (scan_null.fit's LEAST): a node's own
    hardware spreads its links as much as their medians, and thousands of links show it where
    the tail of N medians crowded at their centre (a link is the slowest part of its route)
    may not: a clean allocation of 64 nodes drained a healthy node in 1.0% of scans with the
    tail line alone, 0.5% with this floor (docs/scan.md)."""
    a, b = worse_spread(logs, worse), worse_spread(resid, worse)
    return math.sqrt(max(0.0, a * a - b * b))


def _node_tests(ctx, metric, unit, worse, hosts, src, dst, x, run, few, least=0.0):
    out = []
    for side, col in (("out", src), ("in", dst)):
        idx = {h: [] for h in hosts}
        for i in np.flatnonzero(np.isfinite(x)):
            if col[i] in idx:
                idx[col[i]].append(i)
        have = [h for h in hosts if idx[h]]
        med = {h: float(np.median(x[idx[h]])) for h in have}
        null = None if few else scan_null.fit(np.array([med[h] for h in have]), worse, medians=True,
                                       least=least)
        for h in have:
            if null is None:   # too few nodes: against the links that do not touch it
                away = x[(src != h) & (dst != h) & np.isfinite(x)]
                ref_log = float(np.median(away)) if away.size else float(np.nanmedian(x))
            else:
                ref_log = null.center
            z, p, eff = judge_values([med[h]], null, worse, ref_log)
            mine = [(src[i], dst[i]) for i in idx[h]]
            slow = sorted(idx[h], key=lambda i: -worse * x[i])[:SLOWEST]
            out.append(Test(
                "node", h, f"links_{side}_{metric}", math.exp(med[h]), unit, math.exp(ref_log),
                float(z[0]), float(p[0]), float(eff[0]), str(run),
                f"the median {metric} of its {len(mine)} link(s) {side}, against "
                + ("the links that do not touch it" if null is None else "the other nodes'"),
                detail={"links": len(mine), "slowest": [
                    {"link": f"{src[i]}->{dst[i]}", "value": round(math.exp(x[i]), 6)}
                    for i in slow]},
                null=null, worse=worse, ref_log=ref_log, links=tuple(mine), link_metric=metric))
    return out


def _cable_tests(ctx, metric, unit, worse, run, min_effect, few):
    by_cable = {}
    for link, cables in ctx.routes.items():
        if link in ctx.logs[metric]:
            for c in cables:
                by_cable.setdefault(c, []).append(link)
    by_cable = {c: mine for c, mine in by_cable.items() if len(mine) >= 3}
    ctx.tau[metric] = _between_cables(ctx, metric, worse, by_cable)
    out = []
    for c, mine in by_cable.items():
        t = _cable_test(ctx, metric, unit, worse, c, mine, str(run), few)
        g, pnull = ctx.centre[metric], ctx.pair_null[metric]
        d = np.array([ctx.logs[metric][k] for k in mine]) - g
        effs = scan_null.effect(d, 0.0, worse)
        zs = worse * d / pnull.sigma if pnull is not None else np.full(d.shape, np.inf)
        t.detail = {"pairs": len(mine), "slow": int(np.sum((effs >= min_effect) & (zs >= SLOW_Z)))}
        out.append(t)
    return out


def _between_cables(ctx, metric, worse, by_cable) -> float:
    """The spread of the cables' medians beyond what their links' own spread makes (the
    links of one cable share its hardware and the nodes under it): the cables' robust
    spread, less the median standard error of a cable's median, in quadrature."""
    pnull = ctx.pair_null[metric]
    if pnull is None or len(by_cable) < scan_null.MIN_TEST:
        return 0.0
    g, logs = ctx.centre[metric], ctx.logs[metric]
    meds = np.array([np.median([logs[k] for k in mine]) for mine in by_cable.values()])
    spread = scan_null.fit(meds - g, worse, medians=True).sigma
    se = float(np.median([pnull.median_se(len(m)) for m in by_cable.values()]))
    return math.sqrt(max(0.0, spread * spread - se * se))


def _cable_test(ctx, metric, unit, worse, cable, mine, run, few, logs=None, passno=1):
    logs = ctx.logs[metric] if logs is None else logs
    g, pnull = ctx.centre[metric], ctx.pair_null[metric]
    vals = np.array([logs[k] for k in mine if k in logs])
    med = float(np.median(vals)) if vals.size else math.nan
    if few or pnull is None:   # the effect against the links that do not cross it
        away = [v for k, v in ctx.logs[metric].items() if cable not in ctx.routes.get(k, ())]
        ref = float(np.median(away)) if away else g
        z = p = math.nan
    else:
        ref = g
        z = worse * (med - g) / math.hypot(pnull.median_se(vals.size), ctx.tau.get(metric, 0.0))
        p = float(scan_null.survival(np.array([z]), math.inf)[0])
    return Test("cable", cable, f"cable_{metric}", math.exp(med), unit, math.exp(ref), z, p,
                float(scan_null.effect(med, ref, worse)), run,
                f"the median {metric} of the {vals.size} measured link(s) whose route crosses "
                "the cable, against the links'", passno=passno, null=pnull, worse=worse,
                ref_log=ref, links=tuple(mine), link_metric=metric)


def rejudge(t, ctx, logs, passno=2) -> "Test | None":
    """Link-derived test T judged on LOGS ({(src, dst): log} of T's metric: a second
    measurement, or the links left unexplained), the same way; None without any of its
    links in LOGS."""
    mine = [k for k in t.links if k in logs]
    if not mine:
        return None
    if t.kind == "cable":
        new = _cable_test(ctx, t.link_metric, t.unit, t.worse, t.where, mine, t.run,
                          t.null is None, logs, passno)
        new.detail = {"pairs": len(mine)}
        return new
    med = float(np.median([logs[k] for k in mine])) - t.offset
    z, p, eff = judge_values([med], t.null, t.worse, t.ref_log)
    return Test(t.kind, t.where, t.metric, math.exp(med + t.offset), t.unit, t.median,
                float(z[0]), float(p[0]), float(eff[0]), t.run, t.label, t.reference,
                detail={"links": len(mine)} if t.kind == "node" else {}, passno=passno,
                null=t.null, worse=t.worse, ref_log=t.ref_log, links=tuple(mine),
                link_metric=t.link_metric, offset=t.offset)


def explain(tests, ctx, cut, min_effect, threshold=None) -> tuple:
    """The smallest set of flagged nodes and cables (by their links) that explains the
    flagged: (chosen tests, {where: [what explains it]} of those left out)."""
    def slow(t):   # its links slower than the links' median by the effect, by SLOW_Z
        logs, g, pnull = ctx.logs.get(t.link_metric, {}), ctx.centre.get(t.link_metric), \
            ctx.pair_null.get(t.link_metric)
        d = np.array([logs[k] - g for k in t.links if k in logs])
        if not d.size:
            return 0
        z = t.worse * d / pnull.sigma if pnull is not None else np.full(d.shape, np.inf)
        return int(np.sum((scan_null.effect(d, 0.0, t.worse) >= min_effect) & (z >= SLOW_Z)))
    # greedy, the one that explains the most slow links first (a cable before the nodes whose
    # links cross it), then by p-value and z
    cands = sorted((t for t in tests if t.flagged and t.kind in ("node", "cable") and t.links),
                   key=lambda t: (-slow(t), t.p if math.isfinite(t.p) else 1.0,
                                  -(t.z if math.isfinite(t.z) else 0.0)))
    covered, chosen, by, away = {}, [], {}, {}
    for t in cands:
        key = (t.kind, t.where)
        if key in by:   # already chosen for another metric
            chosen.append(t)
            continue
        left = {k: v for k, v in ctx.logs.get(t.link_metric, {}).items()
                if k in t.links and (k, t.link_metric) not in covered}
        if len(left) < len(t.links):   # explained when most of its links are, or when the
            # rest, judged alone, is not flagged
            again = rejudge(t, ctx, left, passno=t.passno) if 2 * len(left) >= len(t.links) \
                else None
            if again is None or not passes(again, cut, min_effect, threshold):
                away.setdefault(t.where, sorted({covered[(k, t.link_metric)] for k in t.links
                                                 if (k, t.link_metric) in covered}))
                continue
        chosen.append(t)
        by[key] = t
        for k in t.links:
            covered.setdefault((k, t.link_metric), t.where)
    return chosen, away
