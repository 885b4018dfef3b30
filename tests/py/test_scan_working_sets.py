"""A scan compares a metric that depends on a working set (the memory latency on its chain,
triad and the ratios under load on the arrays) only among the nodes measured with the same
(docs/scan.md, "One working set"): a node of a larger set is not judged, with why, never
named; one of a smaller set (which can only flatter it) is judged against the others; alike,
as before. On records as jostle-bench writes them (the chain's and the arrays' sizes in the
run's meta); the whole command on real runs: test_scan.py's saved-baseline test."""

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from jostle.analysis import baselines, scan
from jostle.analysis.comparison import Points
from jostle.analysis.scan import output as scan_output
from jostle.analysis.scan import working_sets as scan_sets
from jostle.studies import scan as study

pytestmark = pytest.mark.unit

MIB = 1 << 20
SPREAD = (1.0, 1.02, 0.99, 1.01, 0.98, 1.03, 0.97, 1.0, 1.01, 0.99, 1.02, 0.98)


def _memlat(ns, chain):
    """A memlat run's record: its point (the chain's bytes among its params) and its meta."""
    points = pd.DataFrame([{"bytes": chain, "accesses": 200000, "metric": "latency",
                            "unit": "ns", "median": ns, "ci95_lo": ns, "ci95_hi": ns}])
    return SimpleNamespace(points=points, param_names=["bytes", "accesses"], caveats=[],
                           meta={"chain": {"bytes": chain, "bytes_wanted": 128 * MIB,
                                           "capped_by": "setup-time"}})


def _contention(gbs, arrays):
    rows = [{"phase": "compute", "size": 4, "rep": 0, "metric": "compute_throughput",
             "unit": "GB/s", "median": gbs, "ci95_lo": gbs, "ci95_hi": gbs}]
    rows += [{"phase": ph, "size": 4, "rep": 0, "metric": "latency", "unit": "us", "median": v,
              "ci95_lo": v, "ci95_hi": v} for ph, v in (("comm", 1.0), ("together", 1.5))]
    return SimpleNamespace(points=pd.DataFrame(rows), param_names=["phase", "size", "rep"],
                           caveats=[], meta={"kernel": {"array_bytes": arrays}})


def _values(chains, ns=None, arrays=None, gbs=None):
    """node_values of len(CHAINS) nodes: node i's chain CHAINS[i] MiB at NS[i] ns (84 ns
    spread by SPREAD by default), its arrays ARRAYS[i] MiB at GBS[i] GB/s."""
    n = len(chains)
    ns = ns or [84.0 * SPREAD[i % len(SPREAD)] for i in range(n)]
    arrays = arrays or [64] * n
    gbs = gbs or [10.0 * SPREAD[i % len(SPREAD)] for i in range(n)]
    return scan.node_values({f"n{i}": {"memlat": _memlat(ns[i], chains[i] * MIB),
                                       "contention": _contention(gbs[i], arrays[i] * MIB)}
                             for i in range(n)})


def _named(verdict):
    return {(f.where, e["metric"]) for f in verdict.findings for e in f.evidence}


def test_node_values_hold_each_nodes_working_sets():
    v = _values([32, 1], arrays=[64, 8])
    assert v.chain_bytes.tolist() == [32 * MIB, MIB] and v.array_bytes.tolist() == [64 * MIB, 8 * MIB]


def test_a_node_measured_with_another_chain_is_not_judged_on_memory_latency():
    # eleven nodes walked 1 MiB (inside the L2: 1.3 ns), one built 32 MiB in its share (84 ns):
    # without the rule, that node is the allocation's memory-latency outlier
    chains = [1] * 11 + [32]
    ns = [1.3 * s for s in SPREAD[:11]] + [84.0]
    verdict = scan.judge(_values(chains, ns), {}, 0.01, 0.1)
    assert ("n11", "memory_latency") not in _named(verdict) and verdict.findings == []
    why = verdict.skipped["n11"]["memory_latency"]
    assert why.startswith("not judged: measured with 32 MiB (chain_bytes), the other nodes "
                          "with 1 MiB (11)") and "--budget" in why
    assert math.isnan(verdict.table.loc["n11", "memory_latency_z"])
    # its other metrics are judged, the other nodes' memory latency too
    assert math.isfinite(verdict.table.loc["n11", "triad_z"])
    assert verdict.table.memory_latency_z.drop("n11").notna().all()
    assert [n for n in verdict.notes if n.startswith("n11: memory_latency not judged")]
    # the same chain everywhere: one measurement, judged as before and named
    alike = scan.judge(_values([32] * 12, [84.0 * s for s in SPREAD[:11]] + [140.0]), {}, 0.01, 0.1)
    assert ("n11", "memory_latency") in _named(alike) and not alike.skipped


def test_the_arrays_decide_triad_and_the_ratios_under_load_not_the_latency_alone():
    gbs = [10.0 * s for s in SPREAD[:11]] + [3.0]
    verdict = scan.judge(_values([32] * 12, arrays=[8] * 11 + [64], gbs=gbs), {}, 0.01, 0.1)
    assert set(verdict.skipped["n11"]) == {"triad", "latency_under_load", "bandwidth_under_load"}
    assert verdict.findings == []
    assert math.isfinite(verdict.table.loc["n11", "latency_alone_z"])
    [note] = [n for n in verdict.notes if n.startswith("n11:")]
    assert note.startswith("n11: triad, latency_under_load, bandwidth_under_load not judged: "
                           "measured with 64 MiB (array_bytes)")


def test_a_node_worse_despite_a_smaller_working_set_is_named():
    """A slow node builds less in its share (at 30% of a core, an eighth of the others'
    arrays): its smaller set can only flatter it, so it is judged against the others, and
    named where it is worse all the same (the namespace scan's slow host); better, it is
    not named."""
    gbs = [10.0 * s for s in SPREAD[:11]] + [1.5]
    ns = [84.0 * s for s in SPREAD[:11]] + [250.0]
    verdict = scan.judge(_values([32] * 11 + [4], ns, arrays=[64] * 11 + [8], gbs=gbs),
                         {}, 0.01, 0.1)
    assert {("n11", "triad"), ("n11", "memory_latency")} <= _named(verdict)
    assert "n11" not in verdict.skipped
    fast = scan.judge(_values([32] * 11 + [1], [84.0 * s for s in SPREAD[:11]] + [1.3]),
                      {}, 0.01, 0.1)
    assert fast.findings == [] and math.isfinite(fast.table.loc["n11", "memory_latency_z"])


def test_no_size_shared_by_two_nodes_judges_none_on_it():
    verdict = scan.judge(_values([1, 32], [1.3, 84.0]), {}, 0.01, 0.25)
    assert verdict.findings == []
    assert "the other nodes with 1 MiB (1)" in verdict.skipped["n1"]["memory_latency"]
    assert "the other nodes with 32 MiB (1)" in verdict.skipped["n0"]["memory_latency"]
    # a tie of two sizes: the larger is the one judged (closer to what the caches ask for)
    assert scan_sets.common([MIB, MIB, 32 * MIB, 32 * MIB]) == 32 * MIB


def test_output_says_not_judged_where_the_values_are_shown():
    verdict = scan.judge(_values([1] * 11 + [32], [1.3] * 11 + [84.0]), {}, 0.01, 0.1)
    [node] = [x for x in scan_output.nodes_json(verdict.table, {}, verdict.skipped)
              if x["host"] == "n11"]
    assert node["memory_latency"] == 84.0 and node["memory_latency_z"] is None
    assert node["chain_bytes"] == 32 * MIB and "memory_latency" in node["not_judged"]
    doc = {"hosts": list(verdict.table.index), "unreachable": [], "suspects": [], "links": [],
           "elapsed_s": 1, "campaign": "c", "figures": [], "notes": verdict.notes}
    text = scan_output.text(doc, verdict.table, verdict.skipped)
    [line] = [ln for ln in text.splitlines() if ln.startswith("n11 ")]
    assert "84 (not judged)" in line
    assert "note: n11: memory_latency not judged: measured with 32 MiB" in text


def _saved(values, sets=True):
    """VALUES' memory latency as a baseline keeps it (baselines._entry, from_records); without
    SETS, as one saved before baselines kept the working sets."""
    rows, runs = [], {}
    for h, row in values.iterrows():
        f = f"results/ref/fp-memlat-{h}.jsonl"
        runs[f] = {"chain_bytes": int(row.chain_bytes)}
        rows.append({"bytes": int(row.chain_bytes), "accesses": 200000, "benchmark": "memlat",
                     "metric": "latency", "unit": "ns", "run": f, "digest": "d", "mpi": "x",
                     "median": row.memory_latency, "ci95_lo": math.nan, "ci95_hi": math.nan})
    entry = baselines._entry(Points("ref", pd.DataFrame(rows), {}, len(runs), sets=runs), "x")
    assert entry["runs"][0]["working_sets"] == {"chain_bytes": int(values.chain_bytes.iloc[0])}
    if not sets:
        for r in entry["runs"]:
            del r["working_sets"]
    points = baselines.from_records(entry, "baseline fleet")
    assert (points.sets is None) == (not sets)
    return scan.baseline_values(points)


def test_against_a_baseline_only_the_same_chain_is_judged():
    base = _saved(_values([32] * 6))
    now = _values([32] * 5 + [1], [200.0] * 5 + [1.3])    # every node slower than it was
    verdict = scan.judge(now, {}, 0.01, 0.1, baseline=base, against="fleet")
    named = {f.where for f in verdict.findings}
    assert named == {f"n{i}" for i in range(5)}
    # n5's 1 MiB chain can only flatter it against the baseline's 32 MiB: judged, not worse
    assert "n5" not in verdict.skipped
    # a chain larger than any the baseline holds is not judged against it
    small = _saved(_values([1] * 6, [1.3] * 6))
    verdict = scan.judge(_values([1] * 5 + [32], [1.3] * 5 + [84.0]), {}, 0.01, 0.1,
                         baseline=small, against="fleet")
    why = verdict.skipped["n5"]["memory_latency_zb"]
    assert why.startswith("not judged against baseline fleet: measured with 32 MiB "
                          "(chain_bytes), the baseline's nodes with 1 MiB (6)")
    # a baseline saved before it kept the working sets: every node against it, as before
    old = _saved(_values([32] * 6), sets=False)
    assert old.chain_bytes.isna().all()
    verdict = scan.judge(now, {}, 0.01, 0.1, baseline=old, against="fleet")
    assert "n5" not in verdict.skipped or "memory_latency_zb" not in verdict.skipped["n5"]
    assert math.isfinite(verdict.table.loc["n5", "memory_latency_zb"])


def test_a_node_measured_again_is_measured_and_judged_with_its_first_working_sets():
    runs = study.fingerprint_runs(study.Settings(budget=10), ["a", "b"], suffix="-again",
                                  sets={"a": {"chain_bytes": 32 * MIB, "array_bytes": 8 * MIB}})
    args = {(r.hosts[0], r.benchmark): r.args for r in runs}
    assert "--bytes" in args[("a", "memlat")] and str(32 * MIB) in args[("a", "memlat")]
    assert str(8 * MIB) in args[("a", "contention")] and "--array-bytes" not in args[("b", "contention")]
    # a second measurement the node's share cut to another chain is not judged again
    chains = [32] * 11 + [32]
    first = scan.judge(_values(chains, [84.0 * s for s in SPREAD[:11]] + [200.0]), {}, 0.01, 0.1)
    assert ("n11", "memory_latency") in _named(first)
    again = _values([32, 8], [84.0, 200.0]).set_axis(["n0", "n11"])
    [f] = scan.second_pass(first, 0.01, 0.1, values=again)
    assert all(e["pass"] == 1 for e in f.evidence)          # kept as it was, not re-judged
    again = _values([32, 32], [84.0, 200.0]).set_axis(["n0", "n11"])
    [f] = scan.second_pass(first, 0.01, 0.1, values=again)
    assert [e["chain_bytes"] for e in f.evidence if e["metric"] == "memory_latency"] == [32 * MIB] * 2
