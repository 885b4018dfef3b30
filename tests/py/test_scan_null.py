"""The scan's null of the node medians at every allocation size (issue 50): a node's median link
crowds at the centre (a link is the slowest part of its route), so below 200 nodes the plain
MAD of the medians (the method then) drained a healthy node in 30 of 30 clean scans of 199
nodes; the worse tail's line at every N, floored by the nodes' spread the links show, drains
none, and a node at 0.6x is still drained. The simulation is bench/scan_null_rates.py's."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from jostle.analysis.scan import links as scan_links
from jostle.analysis.scan import null as scan_null

pytestmark = pytest.mark.unit

BENCH = Path(__file__).resolve().parents[2] / "bench" / "scan_null_rates.py"


def _bench():
    spec = importlib.util.spec_from_file_location("scan_null_rates", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("n, scans, most", [(199, 12, 0), (64, 30, 1), (16, 30, 1)])
def test_a_clean_allocation_drains_no_healthy_node(n, scans, most):
    # the allocation: node hardware lognormal sd 0.05, pair interference t3 sd 0.05,
    # a link the least of the three, 32 shifts; judge at fdr 0.01, min effect 0.1, hold_back.
    # Before: N = 199 drained in 96% of scans, 64 in 61%, 16 in 29% (bench/scan_null_rates.py,
    # 100 scans); now 0.8%, 0.2%, 1.4% (500 scans): MOST of SCANS allows one at 64 and 16
    bench = _bench()
    rng = np.random.default_rng([50, n])
    bad = []
    for _ in range(scans):
        hosts, links, _ = bench.clean_links(n, rng)
        bad += bench.drained(hosts, links)
    assert len(bad) <= most, f"{len(bad)} healthy node(s) drained in {scans} clean scans of {n}"


@pytest.mark.parametrize("n, factor", [(16, 0.5), (64, 0.6), (199, 0.6)])
def test_a_slow_node_is_still_drained(n, factor):
    # 16 nodes fix the medians' spread to 7.5 degrees of freedom (issue 45): a node at 0.6x is
    # drained in 7 of 20 there, at 0.5x in 17 of 20
    bench = _bench()
    rng = np.random.default_rng([51, n])
    hits = 0
    for _ in range(5):
        hosts, links, _ = bench.clean_links(n, rng, fault=3, factor=factor)
        names = bench.drained(hosts, links)
        assert set(names) <= {hosts[3]}
        hits += hosts[3] in names
    assert hits >= 4


def test_the_medians_null_is_one_method_either_side_of_200():
    # the issue: sigma 0.0126 at N = 199 against 0.0354 at N = 200 (the fit changed method);
    # 200 nodes' medians and the same less one: about the same null
    bench = _bench()
    rng = np.random.default_rng(7)
    for _ in range(5):
        hosts, links, _ = bench.clean_links(200, rng)
        med = np.log(links.groupby("src").bandwidth.median().to_numpy())
        s200 = scan_null.fit(med, -1, medians=True).sigma
        s199 = scan_null.fit(np.delete(med, np.argmax(med)), -1, medians=True).sigma
        assert s199 == pytest.approx(s200, rel=0.1) and s199 > 0.02, (s199, s200)


def test_the_links_floor_the_node_medians_spread():
    # thousands of links show the nodes' own spread where N crowded medians may not
    rng = np.random.default_rng(3)
    n, k = 64, 32
    up = 0.05 * rng.standard_normal(n)
    pair = 0.05 * rng.standard_t(3, (n, k)) / math.sqrt(3)
    logs = np.minimum(up[:, None], pair).ravel()
    resid = logs - np.repeat(np.median(np.minimum(up[:, None], pair), axis=1), k)
    floor = scan_links.node_spread(logs, resid, -1)
    assert 0.02 < floor < 0.06
    # links alike between nodes (the pairs' own noise alone): no floor to speak of
    noise = 0.1 * rng.standard_normal(n * k)
    assert scan_links.node_spread(noise, noise, -1) == 0.0
    crowded = np.r_[np.zeros(60), -0.1, -0.12, -0.15, -0.2]
    assert scan_null.fit(crowded, -1, medians=True, least=floor).sigma >= floor
    # five medians: the line from the centre alone (no quantile above the TAIL_LOW one)
    assert scan_null.fit(np.array([0.0, 0.01, -0.01, 0.02, -0.3]), -1, medians=True) is not None
