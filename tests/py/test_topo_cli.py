"""`jostle topo` and `jostle place --comm` against the real jostle-bench (its no-MPI queries),
on every XML of share/topologies and on this machine; skipped when jostle-bench is not built."""

import json

import pytest

from conftest import REPO
from jostle.cli import main

TOPO = REPO / "share" / "topologies"
TABLE_3_1 = TOPO / "hagrid-table-3.1.csv"
# name -> (NUMA nodes, the NIC's node, the farthest node from it, NIC names)
XMLS = {
    "henri.xml": (4, 0, 2, {"ib0", "mlx5_0"}),
    "opteron-2numa-nic0.xml": (2, 0, 1, {"myri0", "eip0"}),
    "opteron-2numa-nic1.xml": (2, 1, 0, {"ib0", "mthca0"}),
    "opteron-8numa.xml": (8, 0, 5, {"ib0", "mthca0"}),
    "this-vm.xml": (1, 0, 0, {"eth0"}),
}


pytestmark = pytest.mark.unit


@pytest.fixture
def bench(monkeypatch, built):
    b = built()
    monkeypatch.setenv("JOSTLE_BENCH", str(b))
    return b


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", sorted(XMLS))
def test_topo_describes_every_xml(bench, capsys, name):
    nn, nic_node, _, nics = XMLS[name]
    t = run_json(capsys, "topo", "--input", str(TOPO / name), "--json")
    m = t["machine"]
    assert m["numa_nodes"] == nn and len(t["numa_nodes"]) == nn
    assert not m["this_system"]
    assert {n["name"] for n in m["nics"]} == nics
    assert all(n["numa"] == nic_node and n["pci"] for n in m["nics"])
    assert sum(len(n["cores"]) for n in t["numa_nodes"]) == m["cores"] == len(t["cores"])
    assert all(n["memory_bytes"] > 0 for n in t["numa_nodes"])
    assert t["caches"] and all(c["bytes"] > 0 for c in t["caches"])
    d = t["distances"]["values"]
    assert len(d) == nn and all(d[i][i] == 10 for i in range(nn))
    assert main(["topo", "--input", str(TOPO / name)]) == 0
    out = capsys.readouterr().out
    assert "not this system" in out and "NIC" in out


@pytest.mark.parametrize("name", sorted(XMLS))
def test_place_near_far_and_hierarchy(bench, capsys, name):
    nn, nic_node, far, _ = XMLS[name]
    xml = str(TOPO / name)
    t = run_json(capsys, "topo", "--input", xml, "--json")
    core_node = {c["index"]: c["numa"] for c in t["cores"]}
    dist = t["distances"]["values"]
    a = run_json(capsys, "place", "--comm", "--input", xml, "--threads", str(nn + 1), "--json")
    assert a["home_numa"] == nic_node and a["far_numa"] == far
    th = a["threads"]
    assert th[0]["numa"] == nic_node and core_node[th[0]["core"]] == nic_node
    # hierarchy: one thread per node by increasing distance from the NIC's node, then again
    seen = [x["numa"] for x in th[:nn]]
    assert sorted(seen) == list(range(nn))
    ds = [dist[nic_node][n] for n in seen]
    assert ds == sorted(ds)
    assert all(core_node[x["core"]] == x["numa"] for x in th)
    assert th[nn]["numa"] == nic_node and th[nn]["core"] != th[0]["core"] or nn == 1 or \
        len([c for c in t["cores"] if c["numa"] == nic_node]) == 1
    assert any("not this system" in u for u in a["unknown"])
    # near: the NIC's node; far: another one (or a clear refusal on one node)
    near = run_json(capsys, "place", "--comm", "--input", xml, "--where", "near", "--json")
    assert near["placement"][0]["numa"] == nic_node
    if nn > 1:
        farj = run_json(capsys, "place", "--comm", "--input", xml, "--where", "far", "--json")
        assert farj["placement"][0]["numa"] == far != nic_node
        assert core_node[farj["placement"][0]["core"]] == far
    else:
        assert main(["place", "--comm", "--input", xml, "--where", "far"]) == 2
        assert "one NUMA node" in capsys.readouterr().err


def test_hagrid_order_follows_links(bench, capsys):
    a = run_json(capsys, "place", "--comm", "--input", str(TOPO / "opteron-8numa.xml"),
                 "--threads", "8", "--json")
    hops = {0: 0, 1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3, 7: 3}  # seed 001, sec. 1 of the facts
    order = [x["numa"] for x in a["threads"]]
    assert [hops[n] for n in order] == sorted(hops[n] for n in order)


def mixed_nics_xml(path):
    """Infini (IB on node 1, made EDR: 15.75 GB/s) plus Dalton's Myri-10G (2 GB/s) and QsNet
    (0.25 GB/s) on node 0: NICs on different nodes, two against one, slow against fast."""
    import copy
    import xml.etree.ElementTree as ET
    inf = ET.parse(TOPO / "opteron-2numa-nic1.xml")
    dal = ET.parse(TOPO / "opteron-2numa-nic0.xml")

    def package(tree, i):
        return next(o for o in tree.iter("object")
                    if o.get("type") == "Package" and o.get("os_index") == i)
    bridge = copy.deepcopy(next(o for o in package(dal, "0") if o.get("type") == "Bridge"))
    for o in bridge.iter("object"):
        o.attrib.pop("gp_index", None)
        if o.get("type") == "PCIDev" and any(c.get("name") == "eip0" for c in o):
            o.set("pci_link_speed", "0.250000")
    for o in inf.iter("object"):
        if o.get("type") == "PCIDev":
            o.set("pci_link_speed", "15.750000")
    package(inf, "0").append(bridge)
    inf.write(path, encoding="UTF-8", xml_declaration=True)
    return str(path)


def test_several_nics_weighed_by_favor(bench, capsys, tmp_path):
    xml = mixed_nics_xml(tmp_path / "mixed.xml")
    lat = run_json(capsys, "place", "--comm", "--input", xml, "--favor", "latency", "--json")
    bw = run_json(capsys, "place", "--comm", "--input", xml, "--favor", "bandwidth", "--json")
    assert lat["home_numa"] == 0 and "favoring latency" in lat["why"]   # two NICs of three
    assert bw["home_numa"] == 1 and "favoring bandwidth" in bw["why"]   # 15.75 of 18 GB/s
    assert any("latencies are not known" in u for u in lat["unknown"])
    # a named NIC overrides the weighing
    one = run_json(capsys, "place", "--comm", "--input", xml, "--nic", "ib0", "--json")
    assert one["home_numa"] == 1 and one["threads"][0]["numa"] == 1


def test_bad_input_exits_2(bench, capsys, tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<topology version='2.0'>\n<object type='Machine' os_index='0'>\n"
                   "</object>\n</topology>\n")
    assert main(["topo", "--input", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "no cpuset" in err and "line 2" in err
    notxml = tmp_path / "x.xml"
    notxml.write_text("hello")
    assert main(["topo", "--input", str(notxml)]) == 2
    assert "not an hwloc XML topology" in capsys.readouterr().err
    assert main(["place", "--comm", "--nic", "nosuchnic0"]) == 2
    assert "nosuchnic0" in capsys.readouterr().err
    assert main(["place"]) == 2
    assert main(["topo", "--measure", "--input", str(TOPO / "henri.xml")]) == 2
    assert "this machine" in capsys.readouterr().err
    for content, why in (("1,2,3\n4,5,6\n", "not square"), ("0,-3\n4,0\n", "≥ 0")):
        f = tmp_path / "m.csv"
        f.write_text(content)
        assert main(["topo", "--matrix", str(f)]) == 2
        assert why in capsys.readouterr().err


def test_matrix_table_3_1_links_and_graph(bench, capsys, tmp_path):
    png = tmp_path / "links.png"
    assert main(["topo", "--input", str(TOPO / "opteron-8numa.xml"), "--matrix", str(TABLE_3_1),
                 "--graph", str(png)]) == 0
    out = capsys.readouterr().out
    assert "11 link(s): 0-1 0-2 1-3 2-3 2-4 3-5 4-6 4-7 5-6 5-7 6-7" in out
    assert out.count("asymmetric") == 8
    assert "overhead over local (ns)" in out
    assert png.stat().st_size > 1000


def test_export_and_reload(bench, capsys, tmp_path):
    out = tmp_path / "me.xml"
    t = run_json(capsys, "topo", "--export", str(out), "--json")
    assert out.stat().st_size > 0
    t2 = run_json(capsys, "topo", "--input", str(out), "--json")
    assert t2["machine"]["cores"] == t["machine"]["cores"]
    assert [n["name"] for n in t2["machine"]["nics"]] == [n["name"] for n in t["machine"]["nics"]]


def test_picture(bench, capsys, tmp_path):
    for name in ("henri.xml", "opteron-8numa.xml"):
        png = tmp_path / f"{name}.png"
        assert main(["topo", "--input", str(TOPO / name), "--picture", str(png)]) == 0
        assert png.stat().st_size > 5000


def test_latency_probe_this_machine_small_buffer(bench, capsys):
    t = run_json(capsys, "topo", "--measure", "--bytes", "1M", "--json")
    mat = t["matrix"]
    n = t["machine"]["numa_nodes"]
    assert len(mat["latency_ns"]) == n
    assert all(0.2 < v < 10000 for row in mat["latency_ns"] for v in row)
    assert all(v > 0 for row in mat["bandwidth_gbs"] for v in row)
    if n == 1:
        assert main(["topo", "--measure", "--bytes", "1M", "--no-bandwidth"]) == 0
        assert "1 x 1" in capsys.readouterr().out


@pytest.mark.mpi
def test_auto_placement_applied_by_a_benchmark(bench, tmp_path, capsys):
    """--comm-core auto --comm-mem auto: the harness applies jostle place's advice."""
    a = run_json(capsys, "place", "--comm", "--threads", "2", "--json")
    rc = main(["pingpong", "--bench", str(bench), "--sizes", "8", "--min-reps", "10",
               "--max-time", "0.1", "--comm-core", "auto", "--comm-mem", "auto", "--quiet",
               "--output-dir", str(tmp_path), "--campaign", "c", "--name", "auto",
               "--runs", "1"])
    assert rc == 0
    from jostle.records.results import load_run
    meta = load_run(tmp_path / "c" / "auto.jsonl").meta
    for rank in ("0", "1"):
        comm = meta["binding"][rank]["comm"]
        want = a["threads"][int(rank)]
        assert comm["requested_core"] == want["core"]
        assert comm["requested_mem"] == want["numa"]
