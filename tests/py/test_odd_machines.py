"""Machines nobody here has: an hwloc 1.x file, a NIC above two NUMA nodes of one package,
more ranks than cores, and record files that are not records."""

import json
import subprocess

import pytest

from mpijobs import built, run_bench

from conftest import DATA

pytestmark = pytest.mark.unit

TOPO = DATA / "topologies"
COD = TOPO / "cod-2numa-nic-on-package.xml"        # 2 NUMA nodes under 1 package, NIC on it
V1 = TOPO / "hwloc1-no-nodesets.xml"               # hwloc 1.x, no nodeset anywhere
V1_MIXED = TOPO / "hwloc1-mixed-nodesets.xml"      # hwloc 1.x, nodesets on NUMA nodes only


@pytest.fixture
def jostle(jostle_cli):
    """`jostle ARGV…`, in this process (conftest.py's jostle_cli)."""
    return jostle_cli


def machine(topology):
    out = subprocess.run([built(), "--machine", "--topology", str(topology)],
                         capture_output=True, text=True, timeout=60)
    return out


def test_hwloc1_file_without_nodesets_is_loaded():
    r = machine(V1)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert (m["cores"], m["packages"], m["numa_nodes"]) == (4, 2, 1)
    assert [(n["name"], n["numa"], n["numa_set"]) for n in m["nics"]] == [("eth0", 0, [0])]


def test_hwloc1_file_with_a_mix_of_nodesets_is_refused_not_crashed():
    r = machine(V1_MIXED)
    assert r.returncode == 2
    assert str(V1_MIXED) in r.stderr and "no nodeset while 2 other(s) have one" in r.stderr


def test_nic_on_a_package_of_two_nodes_is_near_both(jostle):
    m = json.loads(machine(COD).stdout)
    assert m["numa_nodes"] == 2
    for nic in m["nics"]:
        assert nic["numa"] == 0 and nic["numa_set"] == [0, 1], nic
    r = jostle("machine", "--topology", COD)
    assert "mlx5_0 (openfabrics), NUMA nodes 0,1" in r.stdout


@pytest.mark.mpi
def test_placement_treats_every_node_of_the_set_as_near(tmp_path, jostle):
    r = jostle("place", "--comm", "--input", COD, "--threads", "2", "--json")
    assert r.returncode == 0, r.stderr
    a = json.loads(r.stdout)
    assert a["near_numa"] == [0, 1] and "NUMA nodes 0,1" in a["why"]
    # no node is far from this NIC: far is refused as on a one-node machine
    r = jostle("place", "--comm", "--input", COD, "--where", "far")
    assert r.returncode == 2 and "every NUMA node is near the NIC" in r.stderr
    # the benchmark's --comm-core near/far: near on the NIC's nodes, far said to be near too
    r = run_bench("pingpong", "--sizes", "8", "--min-reps", "10", "--max-time", "0.05",
                  "--topology", str(COD), "--comm-core", "far", "--comm-mem", "far", "--quiet",
                  out=tmp_path / "r.jsonl")
    assert r.returncode == 0, r.stderr
    meta = json.loads((tmp_path / "r.jsonl").open().readline())
    assert any("every NUMA node is near the NIC" in w for w in meta["warnings"]), meta["warnings"]


def test_ranks_beyond_the_cores_refused_or_warned(jostle):
    r = jostle("place", "--input", COD, "--ranks", "6")
    assert r.returncode == 2
    assert "--ranks '6'" in r.stderr and "4 cores" in r.stderr and "--oversubscribe" in r.stderr
    r = jostle("place", "--input", COD, "--ranks", "2:6", "--oversubscribe", "--json")
    assert r.returncode == 0, r.stderr
    assert "6 ranks on 4 cores" in json.loads(r.stdout)["warnings"][0]
    assert "warning: 6 ranks on 4 cores" in r.stderr
    r = jostle("place", "--input", COD, "--ranks", "4", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["warnings"] == []


@pytest.mark.parametrize("content", [bytes(range(256)) * 8, b"\x00\x01 not json\n", b""],
                         ids=["binary", "not-json", "empty"])
@pytest.mark.parametrize("command", ["report", "plot"])
def test_unreadable_record_file_is_one_line_naming_it(tmp_path, content, command, jostle):
    d = tmp_path / "c"
    d.mkdir()
    bad = d / "bad.jsonl"
    bad.write_bytes(content)
    argv = [command, d] + (["-o", tmp_path / "figs"] if command == "plot" else [])
    r = jostle(*argv)
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and "Traceback" not in r.stderr, r.stderr
