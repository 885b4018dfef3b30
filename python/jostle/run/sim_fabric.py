"""A simulated allocation that looks like a real one, for `jostle scan --simulate`: nodes whose
links differ, a fabric of switches (a flat switch, or the tree of a topology.conf), faults on a
node's link or on a cable between two switches (docs/scan.md, "Simulated").

The platform is one SimGrid zone routed by Dijkstra (DijkstraCache): every node has its own
link up and down to its switch, every cable between two switches its own link each way, and
every pair of nodes the scan measures an edge of its own, whose route is the pair's route
through the fabric (up*/down*, destination mod k: records/fabric.py) and a link of the pair's
own. A route's cost in SimGrid 3.32's Dijkstra is its number of links: the edges from a node
to its switch carry one more link (`pad`, a fat pipe that costs nothing), so that a measured
pair takes its own edge, and what the scan does not measure (the harness's collectives) takes
the fabric's shortest path.

Noise (`--noise SD`): drawn once from a seeded generator, a node's link up and down and every
cable each way get a factor exp(SD e) on their bandwidth and on their latency, e a standard
normal: the hardware, which a node keeps from one measurement to the next. Each measured pair's
own link gets a draw of its own for each pass of the scan (the confirmation draws anew): the
interference of the moment, e a standard normal or, with `--noise-tails t3`, a Student t with
3 degrees of freedom scaled to a standard deviation of 1 (heavy tails). A pair's link can only
slow it: its bandwidth caps the pair's, its latency (twice the platform's, times e^(SD e) - 1
when that is positive) adds to the route's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from .. import lazy
from ..errors import UsageError

np = lazy.module("numpy")

TAILS = ("normal", "t3")
PRECISION = 1e-7      # seconds: the scan's surf/precision on such a platform (commands/_scan_sim)
MAX_PAIRS = 400_000   # pair edges a platform file may hold (about 100 MB of XML)


@dataclass(frozen=True)
class Noise:
    sd: float = 0.0
    tails: str = "normal"
    seed: int = 1


@dataclass
class Faults:
    """Factors on the platform's bandwidth and latency: NODES {i: (bw, lat)} on node i's link,
    CABLES {(child, parent): (bw, lat)} on a cable, both ways; METRICS {(i, metric): f} on a
    node's drawn fingerprint."""
    nodes: dict = field(default_factory=dict)
    cables: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)


def fingerprint_values(n, nominal, noise=Noise(), faults=None) -> dict:
    """{metric: N values} of a simulated allocation's fingerprints, which SimGrid does not
    run: each node's value of each metric its NOMINAL one ({metric: value}) times a lognormal
    draw of spread NOISE.sd (normal: the node's hardware, the same at every pass), times its
    --inject factor."""
    faults = faults or Faults()
    hw = np.random.default_rng([noise.seed, 3])
    out = {}
    for name, value in nominal.items():
        x = value * np.exp(noise.sd * hw.standard_normal(n))
        for (i, metric), f in faults.metrics.items():
            if metric == name:
                x[i] *= f
        out[name] = x
    return out


def check_noise(sd, tails) -> Noise:
    if not (math.isfinite(sd) and sd >= 0):
        raise UsageError(f"--noise '{sd:g}' is not allowed; expected a spread >= 0 (0.05: 5%)")
    if tails not in TAILS:
        raise UsageError(f"--noise-tails '{tails}' is not allowed; allowed: {', '.join(TAILS)}")
    return Noise(sd, tails)


def _eps(rng, n, tails):
    if tails == "t3":
        return rng.standard_t(3, n) / math.sqrt(3.0)
    return rng.standard_normal(n)


def _fmt(x: float) -> str:
    return f"{x:.9g}"


def platform_xml(hosts, bandwidth, latency, speed, pairs, noise=Noise(), fabric=None,
                 faults=None, passno=1) -> str:
    """The platform: HOSTS (rank r on HOSTS[r]), the nominal link BANDWIDTH (B/s), LATENCY
    (s), SPEED (flop/s); PAIRS the (src, dst) ranks the run measures; FABRIC a
    records.fabric.Fabric over HOSTS or None (one switch); PASSNO the scan's pass (1, 2: the
    pairs' draws)."""
    faults = faults or Faults()
    n = len(hosts)
    pairs = sorted(set(pairs))
    if len(pairs) > MAX_PAIRS:
        raise UsageError(f"{len(pairs)} measured links are too many for one simulated platform "
                         f"(at most {MAX_PAIRS}); measure fewer rounds: --shifts K")
    hw = np.random.default_rng([noise.seed, 1])
    node_f = np.exp(noise.sd * hw.standard_normal((n, 4)))   # up bw, down bw, up lat, down lat
    cables = fabric.cables() if fabric else []
    cable_f = np.exp(noise.sd * hw.standard_normal((max(len(cables), 1), 4)))
    tr = np.random.default_rng([noise.seed, 2, passno])
    pair_bw = np.exp(noise.sd * _eps(tr, len(pairs), noise.tails))
    pair_lat = np.exp(noise.sd * _eps(tr, len(pairs), noise.tails))
    leaf = (lambda h: fabric.leaf[h]) if fabric else (lambda h: "switch")
    switches = list(fabric.children) if fabric else ["switch"]
    out = ["<?xml version='1.0'?>\n", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n',
           '<platform version="4.1">\n',
           f"  <!-- jostle scan: {n} nodes, {_fmt(bandwidth)} B/s and {_fmt(latency)} s per link, "
           f"noise {noise.sd:g} ({noise.tails}, seed {noise.seed}, pass {passno}), "
           f"{len(switches)} switch(es), {len(pairs)} measured pairs -->\n",
           '  <zone id="jostle" routing="DijkstraCache">\n']
    out += [f'    <host id="{h}" speed="{_fmt(speed)}f" core="1"/>\n' for h in hosts]
    out += [f'    <router id="sw:{s}"/>\n' for s in switches]
    out.append('    <link id="pad" bandwidth="1e18Bps" latency="0s" sharing_policy="FATPIPE"/>\n')
    for i, h in enumerate(hosts):
        fb, fl = faults.nodes.get(i, (1.0, 1.0))
        for k, way in ((0, "up"), (1, "down")):
            out.append(f'    <link id="{h}_{way}" bandwidth="{_fmt(bandwidth * fb * node_f[i, k])}Bps"'
                       f' latency="{_fmt(latency * fl * node_f[i, k + 2])}s"/>\n')
    for c, (child, parent) in enumerate(cables):
        fb, fl = faults.cables.get((child, parent), (1.0, 1.0))
        cap = bandwidth * len(fabric.under[child]) / len(fabric.parents[child])
        for k, way in ((0, "up"), (1, "down")):
            out.append(f'    <link id="{child}-{parent}_{way}" bandwidth="{_fmt(cap * fb * cable_f[c, k])}Bps"'
                       f' latency="{_fmt(latency * fl * cable_f[c, k + 2])}s"/>\n')
    for j, (s, d) in enumerate(pairs):
        if noise.sd > 0:
            # below the simulation's precision a latency is taken as 0
            extra = 2 * latency * max(0.0, pair_lat[j] - 1)
            extra = extra if extra >= PRECISION else 0.0
            out.append(f'    <link id="p{s}_{d}" bandwidth="{_fmt(bandwidth * pair_bw[j])}Bps"'
                       f' latency="{_fmt(extra)}s"/>\n')
    routes = []
    for h in hosts:
        routes.append(f'    <route src="{h}" dst="sw:{leaf(h)}" symmetrical="NO">'
                      f'<link_ctn id="{h}_up"/><link_ctn id="pad"/></route>\n'
                      f'    <route src="sw:{leaf(h)}" dst="{h}" symmetrical="NO">'
                      f'<link_ctn id="pad"/><link_ctn id="{h}_down"/></route>\n')
    for child, parent in cables:
        routes.append(f'    <route src="sw:{child}" dst="sw:{parent}" symmetrical="NO">'
                      f'<link_ctn id="{child}-{parent}_up"/></route>\n'
                      f'    <route src="sw:{parent}" dst="sw:{child}" symmetrical="NO">'
                      f'<link_ctn id="{child}-{parent}_down"/></route>\n')
    index = fabric.index() if fabric else {}
    for s, d in pairs:
        a, b = hosts[s], hosts[d]
        way = fabric.route(a, b, index[b]) if fabric else []
        links = [f'<link_ctn id="{a}_up"/>', *(f'<link_ctn id="{c}-{p}_{w}"/>' for c, p, w in way),
                 f'<link_ctn id="{b}_down"/>', *([f'<link_ctn id="p{s}_{d}"/>'] if noise.sd > 0 else [])]
        routes.append(f'    <route src="{a}" dst="{b}" symmetrical="NO">{"".join(links)}</route>\n')
    out += routes
    out.append("  </zone>\n</platform>\n")
    return "".join(out)


def write(path: Path, text: str, write_it=True) -> Path:
    if write_it:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path


def hostfile_text(hosts) -> str:
    return "".join(f"{h}\n" for h in hosts)
