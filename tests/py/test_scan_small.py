"""The scan's judgement at every allocation size (issue 45), on simulated allocations whose
truth is known (bench/scan_allocations.py's, with the functions `jostle scan` runs): a null
whose p-values are not smaller than they say from 5 values on, nothing named on statistics
where they cannot decide, a batch of slow nodes not taken for the null's tail, and node
classes judged apart."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from jostle import cli
from jostle.analysis import scan
from jostle.analysis.scan import null as scan_null

pytestmark = pytest.mark.unit

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _bench(name="scan_allocations"):
    import sys
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("n", [5, 8, 16])
def test_a_fingerprint_null_from_few_values_is_not_overconfident(n):
    # normal values: the share of p-values under 0.01 is at most about 0.01. With the spread
    # taken as known it was 5.0 times too many at 5 values, 3.4 at 8, 2.3 at 16
    rng = np.random.default_rng([45, n])
    ps = []
    for _ in range(20_000 // n):
        x = 0.05 * rng.standard_normal(n)
        ps.append(scan_null.fit(x, +1, symmetric=True).p(x, +1))
    share = float(np.mean(np.concatenate(ps) < 0.01))
    assert share <= 0.012, share


@pytest.mark.parametrize("n", [5, 8, 16])
def test_a_clean_small_allocation_names_nothing(n):
    # fingerprints 5% apart, t3 pair noise, flagged links measured again: before, a suspect
    # in 30% of scans at 5 nodes, 41% at 16 (issue 45); now 0-1% (bench, 200 scans)
    bench = _bench()
    rng = np.random.default_rng([46, n])
    named = sum(bool(bench.scan_once(n, rng)[0]) for _ in range(12))
    assert named <= 1, f"{named} of 12 clean scans of {n} nodes named something"


def test_below_what_a_test_can_reach_the_scan_says_so_and_judges_the_effect():
    bench = _bench()
    rng = np.random.default_rng(8)
    hosts, links, hw = bench.clean_links(8, rng)
    values = bench.fingerprints(hosts, rng, slow=[2], factor=0.85)
    values.loc[hosts[5], "memory_latency"] *= 1.6
    again = bench.clean_links(8, rng, hw=hw)[1]   # a link slow once, by its t3 draw, is not
    found, verdict = bench.suspects(hosts, links, values, again)
    assert any("too few for a test of" in n and "effect alone" in n for n in verdict.notes)
    # 15% slower is 3 spreads out: not named on its z; 60% slower is named on its effect
    assert [(f.where, f.evidence[0]["metric"]) for f in found] == [(hosts[5], "memory_latency")]
    assert math.isnan(found[0].p)


def test_a_batch_of_slow_nodes_is_not_taken_for_the_tail():
    # 26 of 256 at 0.7x triad: each named in 0% of scans when the worse side's tail gave the
    # null its shape; 88% (bench, 50 scans)
    bench = _bench()
    rng = np.random.default_rng([47, 256])
    shares = []
    for _ in range(3):
        found, hosts = bench.scan_once(256, rng, slow=range(26))
        names = {f.where for f in found if f.kind == "node"}
        shares.append(len(names & set(hosts[:26])) / 26)
        assert names <= set(hosts[:26])
    assert np.mean(shares) >= 0.8, shares


def test_two_classes_are_judged_apart():
    # half of 64 nodes 15% better on every fingerprint metric (a newer firmware): as two
    # classes nothing is named; a node of the older class at 0.5x of it is named
    bench = _bench()
    rng = np.random.default_rng([48, 64])
    for _ in range(3):
        hosts, links, hw = bench.clean_links(64, rng)
        values = bench.fingerprints(hosts, rng, fast=range(32), faster=1.15)
        again = bench.clean_links(64, rng, hw=hw)[1]
        cls = {h: "new" if i < 32 else "old" for i, h in enumerate(hosts)}
        assert bench.suspects(hosts, links, values, again, cls)[0] == []
        values.loc[hosts[40], "triad"] *= 0.5
        assert [f.where for f in bench.suspects(hosts, links, values, again, cls)[0]] == \
            [hosts[40]]


@pytest.mark.parametrize("argv, word", [
    (["--groups", "fast"], "NAME=PATTERN"),
    (["--groups", "a=node-1;a=node-2"], "named twice"),
    (["--groups", "a=/node-[/"], "not a regular expression"),
    (["--groups", "a=node-1,node-2"], "host 'node-0' is in no class"),
])
def test_bad_groups_exit_2_in_one_line(tmp_path, capsys, argv, word):
    try:
        rc = cli.main(["scan", "--simulate", "--nodes", "4", "--dry-run", "--output-dir",
                       str(tmp_path), *argv])
    except SystemExit as e:
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert word in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "scan").exists()


def test_classes_keep_every_node_in_one():
    groups = {"new": ["n0*"], "old": ["/^n[1-9]/"]}
    from jostle.analysis.scan import classes as scan_classes
    got = scan_classes.classes_of(["n01", "n12", "n05"], groups)
    assert got == {"n01": "new", "n12": "old", "n05": "new"}
    assert scan_classes.by_class(["n01", "n12", "n05"], got) == [["n01", "n05"], ["n12"]]
    assert scan.judge.__defaults__[-1] is None   # no classes: the allocation as one


def test_a_slow_link_is_judged_with_its_own_repeat():
    # one link at 0.4x among t3 pair noise: its p on one measurement cannot reach the
    # family's bar (a link at 0.5x: 0 of 150 scans, issue 45); screened, measured again and
    # judged by max(p1, p2)^2 it is named; slow only the first time, it is not
    bench = _bench()
    rng = np.random.default_rng([49, 64])
    named = {True: 0, False: 0}
    for both in (True, False) * 3:
        hosts, links, hw = bench.clean_links(64, rng)
        again = bench.clean_links(64, rng, hw=hw)[1]
        for table in (links, again) if both else (links,):
            table.loc[0, "bandwidth"] *= 0.4
        found, verdict = bench.suspects(hosts, links, None, again)
        where = f"{links.src[0]}->{links.dst[0]}"
        assert all(f.where == where for f in found)
        named[both] += any(f.where == where for f in found)
        if found:
            assert "judged with its repeat" in found[0].evidence[0]["label"]
            assert [e["pass"] for e in found[0].evidence] == [1, 2]
    assert named == {True: 3, False: 0}, named
