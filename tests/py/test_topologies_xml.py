"""Checks of the fake-machine hwloc XML topologies in share/topologies/.

Three layers, from the cheapest to the most faithful:

1. pure-XML structure (always runs): every non-I/O object carries cpuset,
   complete_cpuset, nodeset and complete_nodeset (hwloc 2.9 crashes or
   refuses the file otherwise when I/O types are enabled), the distances2
   matrix is well formed (that the generator reproduces the committed files is
   test_golden.py's);
2. hwloc-ls --input FILE --whole-io (skipped when hwloc-ls is missing);
3. a tiny C program compiled with cc against libhwloc (skipped when cc or
   hwloc.h is missing): it enables I/O with HWLOC_TYPE_FILTER_KEEP_IMPORTANT
   *before* hwloc_topology_set_xml + load, walks the network/OpenFabrics OS
   devices and prints the NUMA locality of each (via
   hwloc_get_non_io_ancestor_obj), plus the NUMALatency distances.

Expected values come from the published facts (seed 000 sec. 2.2 for henri,
seed 001 sec. 2.2 / table 3.1 for the Opterons), not from the files.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
TOPO = ROOT / "share" / "topologies"
GENERATED = ["henri.xml", "opteron-2numa-nic0.xml", "opteron-2numa-nic1.xml",
             "opteron-8numa.xml", "memonly-numa.xml"]
ALL = GENERATED + ["this-vm.xml"]
IO_TYPES = {"Bridge", "PCIDev", "OSDev"}
SETS = ("cpuset", "complete_cpuset", "nodeset", "complete_nodeset")

# what each fake machine must show, from the published facts
EXPECT = {
    # seed 000 sec. 2.2: 2 x Xeon Gold 6140, 36 cores, 4 NUMA, 96 GB, CX-4 EDR
    "henri.xml": dict(pus=36, packages=2, numa=4, mem_gib=96,
                      nics={"ib0": {0}, "mlx5_0": {0}}),
    # seed 001 sec. 2.2: Dalton, 2 dual-core Opterons, Myri-10G + QsNetII on node 0
    "opteron-2numa-nic0.xml": dict(pus=4, packages=2, numa=2, mem_gib=None,
                                   nics={"myri0": {0}, "eip0": {0}}),
    # seed 001 sec. 2.2: Infini, InfiniBand (InfiniHost III) on node 1
    "opteron-2numa-nic1.xml": dict(pus=4, packages=2, numa=2, mem_gib=None,
                                   nics={"ib0": {1}, "mthca0": {1}}),
    # seed 001 sec. 2.2: Hagrid, 8 NUMA nodes (8 dual-core), IB near node 0
    "opteron-8numa.xml": dict(pus=16, packages=8, numa=8, mem_gib=None,
                              nics={"ib0": {0}, "mthca0": {0}}),
    # made up: 2 x 4 cores with a node each, and a memory-only (CXL-like) node; no NIC
    "memonly-numa.xml": dict(pus=8, packages=2, numa=3, local_numa=2, mem_gib=None, nics={}),
}

# seed 001 sec. 3.3.2: the 11 HyperTransport links of Hagrid, read from the
# 22 minimal (~34 ns) entries of table 3.1
HAGRID_LINKS = {(0, 1), (0, 2), (1, 3), (2, 3), (2, 4), (3, 5), (4, 6), (4, 7),
                (5, 6), (5, 7), (6, 7)}


def parse_bitmap(text: str) -> set[int]:
    """hwloc bitmap string -> set of indexes (finite bitmaps only)."""
    value = 0
    for word in text.split(","):
        value = (value << 32) | int(word, 16)
    return {i for i in range(value.bit_length()) if value >> i & 1}


def load_generator():
    spec = importlib.util.spec_from_file_location("topo_generate",
                                                  TOPO / "generate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def objects(root):
    return root.iter("object")


def distances(root):
    d = root.find("distances2")
    if d is None:
        return None, None
    n = int(d.get("nbobjs"))
    idx = [int(x) for x in d.find("indexes").text.split()]
    vals = [int(x) for x in d.find("u64values").text.split()]
    assert len(idx) == n and len(vals) == n * n
    return d, [vals[i * n:(i + 1) * n] for i in range(n)]


# ---------------------------------------------------------------- layer 1


@pytest.mark.parametrize("fname", ALL)
def test_every_non_io_object_has_all_four_sets(fname):
    root = ET.parse(TOPO / fname).getroot()
    assert root.get("version") == "2.0"
    for obj in objects(root):
        if obj.get("type") in IO_TYPES:
            continue
        missing = [a for a in SETS if obj.get(a) is None]
        assert not missing, (fname, obj.get("type"), obj.get("os_index"), missing)


@pytest.mark.parametrize("fname", ALL)
def test_children_sets_nest_in_parent(fname):
    root = ET.parse(TOPO / fname).getroot()

    def walk(el, pcpus, pnodes):
        for child in el.findall("object"):
            if child.get("type") in IO_TYPES:
                continue
            c, n = parse_bitmap(child.get("cpuset")), parse_bitmap(child.get("nodeset"))
            assert c <= pcpus and n <= pnodes, (fname, child.get("type"))
            walk(child, c, n)

    machine = root.find("object")
    walk(machine, parse_bitmap(machine.get("cpuset")),
         parse_bitmap(machine.get("nodeset")))


@pytest.mark.parametrize("fname", GENERATED)
def test_structure_matches_published_facts(fname):
    exp = EXPECT[fname]
    root = ET.parse(TOPO / fname).getroot()
    by_type = {}
    for obj in objects(root):
        by_type.setdefault(obj.get("type"), []).append(obj)
    assert len(by_type["PU"]) == exp["pus"]
    assert len(by_type["Core"]) == exp["pus"]          # no SMT anywhere
    assert len(by_type["Package"]) == exp["packages"]
    assert len(by_type["NUMANode"]) == exp["numa"]
    # each NUMA node owns the same number of cores, but a memory-only one (empty cpuset)
    local = [n for n in by_type["NUMANode"] if parse_bitmap(n.get("cpuset"))]
    sizes = {len(parse_bitmap(n.get("cpuset"))) for n in local}
    assert sizes == {exp["pus"] // exp.get("local_numa", exp["numa"])}
    if exp["mem_gib"] is not None:
        total = sum(int(n.get("local_memory")) for n in by_type["NUMANode"])
        assert total == exp["mem_gib"] << 30
    names = {o.get("name") for o in by_type.get("OSDev", [])}
    assert names == set(exp["nics"])


def test_henri_caches_and_model():
    root = ET.parse(TOPO / "henri.xml").getroot()
    l3 = [o for o in objects(root) if o.get("type") == "L3Cache"]
    assert len(l3) == 2
    # Intel ARK: 24.75 MB L3 per Xeon Gold 6140
    assert all(int(o.get("cache_size")) == int(24.75 * 1024 * 1024) for o in l3)
    models = {i.get("value") for i in root.iter("info") if i.get("name") == "CPUModel"}
    assert models == {"Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz"}


@pytest.mark.parametrize("fname", GENERATED)
def test_distances_are_slit_like(fname):
    root = ET.parse(TOPO / fname).getroot()
    d, m = distances(root)
    assert d is not None, "no distances2 element"
    assert d.get("type") == "NUMANode" and d.get("name") == "NUMALatency"
    assert int(d.get("kind")) & 4, "kind must include HWLOC_DISTANCES_KIND_MEANS_LATENCY"
    assert int(d.get("nbobjs")) == EXPECT[fname]["numa"]
    n = len(m)
    for i in range(n):
        assert m[i][i] == 10
        for j in range(n):
            if i != j:
                assert m[i][j] > 10


def test_henri_distances_reflect_snc():
    _, m = distances(ET.parse(TOPO / "henri.xml").getroot())
    # nodes 0,1 on socket 0; 2,3 on socket 1: same-socket < cross-socket
    assert m[0][1] < m[0][2] and m[2][3] < m[1][3]


def test_hagrid_distances_give_table_3_1_links():
    sys.path.insert(0, str(ROOT / "python"))
    try:
        from jostle.analysis.topo_links import infer_links
    finally:
        sys.path.pop(0)
    _, m = distances(ET.parse(TOPO / "opteron-8numa.xml").getroot())
    links, hops, _ = infer_links(m, rel_tol=0.25)
    assert set(links) == HAGRID_LINKS
    # the NIC's node (0) is 3 hops from the farthest nodes
    assert max(hops[0]) == 3


# ---------------------------------------------------------------- layer 2

HWLOC_LS = shutil.which("hwloc-ls") or shutil.which("lstopo-no-graphics")


@pytest.mark.skipif(HWLOC_LS is None, reason="hwloc-ls / lstopo-no-graphics not installed")
@pytest.mark.parametrize("fname", ALL)
def test_hwloc_ls_whole_io_loads(fname):
    out = subprocess.run([HWLOC_LS, "--input", str(TOPO / fname), "--whole-io"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Machine" in out.stdout
    assert "error" not in out.stderr.lower(), out.stderr
    for nic in EXPECT.get(fname, {}).get("nics", {}):
        assert f'"{nic}"' in out.stdout


# ---------------------------------------------------------------- layer 3

CHECK_C = r"""
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  hwloc_topology_t topo;
  hwloc_obj_t osdev = NULL;
  char buf[256];
  if (argc != 2) return 2;
  if (hwloc_topology_init(&topo)) return 3;
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_set_xml(topo, argv[1])) { perror("set_xml"); return 4; }
  if (hwloc_topology_load(topo)) { perror("load"); return 5; }
  printf("pus %d\n", hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU));
  printf("numa %d\n", hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));
  printf("packages %d\n", hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE));
  while ((osdev = hwloc_get_next_osdev(topo, osdev)) != NULL) {
    hwloc_obj_t anc;
    if (osdev->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK
        && osdev->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS)
      continue;
    anc = hwloc_get_non_io_ancestor_obj(topo, osdev);
    hwloc_bitmap_list_snprintf(buf, sizeof buf, anc->nodeset);
    printf("nic %s %s numa=%s ancestor=%s\n", osdev->name,
           osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ? "net" : "openfabrics",
           buf, hwloc_obj_type_string(anc->type));
  }
  {
    unsigned nr = 1, i, j;
    struct hwloc_distances_s *d;
    if (hwloc_distances_get_by_name(topo, "NUMALatency", &nr, &d, 0) == 0 && nr >= 1) {
      printf("distances %u kind=%lu\n", d->nbobjs, (unsigned long) d->kind);
      for (i = 0; i < d->nbobjs; i++) {
        printf("row %u", d->objs[i]->os_index);
        for (j = 0; j < d->nbobjs; j++)
          printf(" %llu", (unsigned long long) d->values[i * d->nbobjs + j]);
        printf("\n");
      }
      hwloc_distances_release(topo, d);
    } else {
      printf("distances none\n");
    }
  }
  hwloc_topology_destroy(topo);
  return 0;
}
"""


def _have_hwloc_dev():
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None, "no C compiler (cc)"
    inc = subprocess.run(["pkg-config", "--cflags", "hwloc"], capture_output=True,
                         text=True) if shutil.which("pkg-config") else None
    if not (Path("/usr/include/hwloc.h").exists()
            or (inc is not None and inc.returncode == 0)):
        return None, "hwloc.h not found (install libhwloc-dev)"
    return cc, ""


@pytest.fixture(scope="module")
def hwloc_check(tmp_path_factory):
    cc, why = _have_hwloc_dev()
    if cc is None:
        pytest.skip(why)
    d = tmp_path_factory.mktemp("hwloc_check")
    src, exe = d / "check.c", d / "check"
    src.write_text(CHECK_C)
    flags = []
    if shutil.which("pkg-config"):
        pc = subprocess.run(["pkg-config", "--cflags", "--libs", "hwloc"],
                            capture_output=True, text=True)
        if pc.returncode == 0:
            flags = pc.stdout.split()
    if not flags:
        flags = ["-lhwloc"]
    res = subprocess.run([cc, "-O0", "-o", str(exe), str(src)] + flags,
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip("cannot build against libhwloc: " + res.stderr[-500:])
    return exe


def run_check(exe, fname):
    env = dict(os.environ)
    env.pop("HWLOC_XMLFILE", None)
    out = subprocess.run([str(exe), str(TOPO / fname)], capture_output=True,
                         text=True, timeout=60, env=env)
    assert out.returncode == 0, (out.returncode, out.stderr)
    info = {"nics": {}, "rows": {}}
    for line in out.stdout.splitlines():
        parts = line.split()
        if parts[0] in ("pus", "numa", "packages"):
            info[parts[0]] = int(parts[1])
        elif parts[0] == "nic":
            numa = parts[3].split("=", 1)[1]
            nodes = set()
            for rng in filter(None, numa.split(",")):
                lo, _, hi = rng.partition("-")
                nodes |= set(range(int(lo), int(hi or lo) + 1))
            info["nics"][parts[1]] = nodes
        elif parts[0] == "row":
            info["rows"][int(parts[1])] = [int(v) for v in parts[2:]]
    return info


@pytest.mark.parametrize("fname", GENERATED)
def test_c_check_nic_locality(hwloc_check, fname):
    exp = EXPECT[fname]
    info = run_check(hwloc_check, fname)
    assert info["pus"] == exp["pus"]
    assert info["numa"] == exp["numa"]
    assert info["packages"] == exp["packages"]
    assert info["nics"] == exp["nics"]
    # hwloc read the whole distances matrix
    assert sorted(info["rows"]) == list(range(exp["numa"]))


def test_c_check_this_vm(hwloc_check):
    info = run_check(hwloc_check, "this-vm.xml")
    assert info["pus"] >= 1 and info["numa"] >= 1
    # every NIC of the VM has a (non-empty) NUMA locality
    for name, nodes in info["nics"].items():
        assert nodes, name


def test_c_check_hagrid_distances_asymmetric(hwloc_check):
    rows = run_check(hwloc_check, "opteron-8numa.xml")["rows"]
    # table 3.1: node 0 -> memory 5 crosses 4 links, 5 -> 0 only 3 (sec. 3.3.2)
    assert rows[0][5] > rows[5][0]
