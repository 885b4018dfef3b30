#!/usr/bin/env python3
"""Generate the fake-machine hwloc 2.x XML topologies of share/topologies/.

Every file is written from published facts (see README.md next to this
script for the source of each number and for what is assumed).  Run:

    python3 share/topologies/generate.py            # rewrite the XML files (make golden does)
    python3 share/topologies/generate.py --check    # exit 1 if a file differs

The output is deterministic (no timestamps), so --check can run in CI.
The machine's own topology (this-vm.xml) is NOT produced here: it is an
lstopo export, see README.md.

Standard library only.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent

# hwloc_obj_osdev_type_e values (hwloc 2.x): BLOCK=0 GPU=1 NETWORK=2
# OPENFABRICS=3 DMA=4 COPROC=5
OSDEV_NETWORK = 2
OSDEV_OPENFABRICS = 3

# hwloc distances kinds: FROM_OS=1 FROM_USER=2 MEANS_LATENCY=4 MEANS_BANDWIDTH=8
KIND_FROM_OS_LATENCY = 1 | 4

GiB = 1 << 30
KiB = 1 << 10


# --------------------------------------------------------------------------
# bitmaps
# --------------------------------------------------------------------------

def bitmap(indexes) -> str:
    """hwloc bitmap string (hwloc_bitmap_snprintf style): 32-bit words,
    most significant first, each 0x%08x, e.g. 0x0000000f,0xffffffff."""
    value = 0
    for i in indexes:
        value |= 1 << i
    words = []
    while True:
        words.append(value & 0xFFFFFFFF)
        value >>= 32
        if not value:
            break
    return ",".join("0x%08x" % w for w in reversed(words))


# --------------------------------------------------------------------------
# a tiny object tree
# --------------------------------------------------------------------------

class Obj:
    """One hwloc object. cpus/nodes are None for I/O and Misc objects."""

    def __init__(self, type_, os_index=None, cpus=None, nodes=None,
                 attrs=None, infos=None):
        self.type = type_
        self.os_index = os_index
        self.cpus = cpus
        self.nodes = nodes
        self.attrs = dict(attrs or {})
        self.infos = list(infos or [])
        self.mem = []       # memory children (NUMANode)
        self.children = []  # normal children
        self.io = []        # I/O children (Bridge, PCIDev, OSDev)

    def add(self, child):
        if child.type == "NUMANode":
            self.mem.append(child)
        elif child.type in ("Bridge", "PCIDev", "OSDev"):
            self.io.append(child)
        else:
            self.children.append(child)
        return child


def to_element(obj: Obj, gp) -> ET.Element:
    el = ET.Element("object")
    el.set("type", obj.type)
    if obj.os_index is not None:
        el.set("os_index", str(obj.os_index))
    if obj.cpus is not None:
        cs = bitmap(obj.cpus)
        ns = bitmap(obj.nodes)
        el.set("cpuset", cs)
        el.set("complete_cpuset", cs)
        if obj.type == "Machine":
            el.set("allowed_cpuset", cs)
        el.set("nodeset", ns)
        el.set("complete_nodeset", ns)
        if obj.type == "Machine":
            el.set("allowed_nodeset", ns)
    el.set("gp_index", str(next(gp)))
    for k, v in obj.attrs.items():
        el.set(k, str(v))
    for name, value in obj.infos:
        ET.SubElement(el, "info", name=name, value=str(value))
    if obj.type == "NUMANode":
        # 4 KiB pages only; count derived from local_memory
        ET.SubElement(el, "page_type", size="4096",
                      count=str(int(obj.attrs["local_memory"]) // 4096))
    for child in obj.mem + obj.children + obj.io:
        el.append(to_element(child, gp))
    return el


def distances_element(values, name="NUMALatency", kind=KIND_FROM_OS_LATENCY):
    n = len(values)
    el = ET.Element("distances2", type="NUMANode", nbobjs=str(n),
                    kind=str(kind), name=name, indexing="os")
    idx = "".join("%d " % i for i in range(n))
    ET.SubElement(el, "indexes", length=str(len(idx))).text = idx
    vals = "".join("%d " % v for row in values for v in row)
    ET.SubElement(el, "u64values", length=str(len(vals))).text = vals
    return el


def serialize(machine: Obj, distances) -> str:
    root = ET.Element("topology", version="2.0")
    gp = itertools.count(1)
    root.append(to_element(machine, gp))
    if distances is not None:
        root.append(distances_element(distances))
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<!DOCTYPE topology SYSTEM "hwloc2.dtd">\n' + body + "\n")


# --------------------------------------------------------------------------
# building blocks
# --------------------------------------------------------------------------

def cache(type_, os_index, cpus, nodes, size, depth, line, assoc, ctype):
    # cache_type: 0 unified, 1 data, 2 instruction
    return Obj(type_, os_index, cpus, nodes, attrs={
        "cache_size": size, "depth": depth, "cache_linesize": line,
        "cache_associativity": assoc, "cache_type": ctype})


def core_with_caches(pu, core_os_index, node, caches):
    """caches: list of (type, size, depth, assoc, ctype) outermost first;
    returns the outermost object, with Core + PU at the bottom."""
    cpus, nodes = [pu], [node]
    top = None
    parent = None
    for (type_, size, depth, assoc, ctype) in caches:
        c = cache(type_, pu, cpus, nodes, size, depth, 64, assoc, ctype)
        if parent is None:
            top = c
        else:
            parent.add(c)
        parent = c
    core = Obj("Core", core_os_index, cpus, nodes)
    core.add(Obj("PU", pu, cpus, nodes))
    if parent is None:
        return core
    parent.add(core)
    return top


def numanode(os_index, cpus, size):
    return Obj("NUMANode", os_index, cpus, [os_index],
               attrs={"local_memory": size})


def hostbridge(bus_lo, bus_hi):
    return Obj("Bridge", attrs={"bridge_type": "0-1", "depth": 0,
                                "bridge_pci": "0000:[%02x-%02x]" % (bus_lo, bus_hi)})


def pcibridge(busid, ven, dev, bus_lo, bus_hi, speed):
    return Obj("Bridge", attrs={
        "bridge_type": "1-1", "depth": 1,
        "bridge_pci": "0000:[%02x-%02x]" % (bus_lo, bus_hi),
        "pci_busid": busid,
        "pci_type": "0604 [%04x:%04x] [0000:0000] 00" % (ven, dev),
        "pci_link_speed": "%f" % speed})


def pcidev(busid, classid, ven, dev, subven, subdev, rev, speed, infos):
    return Obj("PCIDev", attrs={
        "pci_busid": busid,
        "pci_type": "%04x [%04x:%04x] [%04x:%04x] %02x" % (
            classid, ven, dev, subven, subdev, rev),
        "pci_link_speed": "%f" % speed}, infos=infos)


def osdev(name, osdev_type, infos=()):
    return Obj("OSDev", attrs={"name": name, "osdev_type": osdev_type},
               infos=infos)


def pcie_gbps(lanes, gen):
    """PCIe link speed in GB/s as hwloc computes it (lanes x rate x encoding / 8)."""
    rate, enc = {1: (2.5, 8 / 10), 2: (5.0, 8 / 10), 3: (8.0, 128 / 130)}[gen]
    return lanes * rate * enc / 8


def machine_obj(all_cpus, all_nodes, infos):
    return Obj("Machine", 0, all_cpus, all_nodes, infos=infos)


# --------------------------------------------------------------------------
# henri: 2 x Xeon Gold 6140, SNC-2 -> 4 NUMA nodes, ConnectX-4 EDR on node 0
# --------------------------------------------------------------------------

def henri():
    sockets, snc, cores_per_snc = 2, 2, 9
    cores_per_socket = snc * cores_per_snc           # 18
    ncpu = sockets * cores_per_socket                # 36
    nnodes = sockets * snc                           # 4
    mem_per_node = 96 * GiB // nnodes                # 24 GiB
    l3 = 25344 * KiB                                 # 24.75 MB per socket
    m = machine_obj(range(ncpu), range(nnodes), [
        ("JostleFake", "henri"),
        ("JostleSource", "Swartvagher COMPAS 2021 sec. 2.2 (seed 000); Intel ARK Xeon Gold 6140"),
        ("Architecture", "x86_64"),
    ])
    for s in range(sockets):
        scpus = list(range(s * cores_per_socket, (s + 1) * cores_per_socket))
        snodes = list(range(s * snc, (s + 1) * snc))
        pkg = m.add(Obj("Package", s, scpus, snodes, infos=[
            ("CPUVendor", "GenuineIntel"), ("CPUFamilyNumber", 6),
            ("CPUModelNumber", 85),
            ("CPUModel", "Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz"),
            ("CPUStepping", 4)]))
        l3obj = pkg.add(cache("L3Cache", s, scpus, snodes, l3, 3, 64, 11, 0))
        for g in range(snc):
            node = s * snc + g
            gcpus = list(range(node * cores_per_snc, (node + 1) * cores_per_snc))
            grp = l3obj.add(Obj("Group", None, gcpus, [node],
                                attrs={"subtype": "SubNUMACluster"}))
            grp.add(numanode(node, gcpus, mem_per_node))
            for pu in gcpus:
                grp.add(core_with_caches(pu, pu - s * cores_per_socket, node, [
                    ("L2Cache", 1024 * KiB, 2, 16, 0),
                    ("L1Cache", 32 * KiB, 1, 8, 1),
                    ("L1iCache", 32 * KiB, 1, 8, 2)]))
            if node == 0:
                # ConnectX-4 (MT27700) EDR HCA, PCIe 3.0 x16, local to NUMA node 0
                hb = grp.add(hostbridge(0x17, 0x18))
                br = hb.add(pcibridge("0000:17:00.0", 0x8086, 0x2030, 0x18, 0x18,
                                      pcie_gbps(16, 3)))
                dev = br.add(pcidev("0000:18:00.0", 0x0207, 0x15b3, 0x1013,
                                    0x15b3, 0x0008, 0, pcie_gbps(16, 3), [
                                        ("PCIVendor", "Mellanox Technologies"),
                                        ("PCIDevice", "MT27700 Family [ConnectX-4]")]))
                dev.add(osdev("ib0", OSDEV_NETWORK, [("Address", "80:00:00:00:fe:80:00:00:00:00:00:00:00:00:00:00:00:00:00:01"), ("Port", "1")]))
                dev.add(osdev("mlx5_0", OSDEV_OPENFABRICS, [
                    ("NodeGUID", "0000:0000:0000:0001"), ("Port1State", "4"),
                    ("Port1LID", "0x1"), ("Port1LMC", "0")]))
    # Typical ACPI SLIT of a 2-socket Skylake-SP in SNC-2 mode (assumed):
    # 10 local, 11 other sub-NUMA cluster of the same socket, 21 other socket.
    dist = [[10 if i == j else (11 if i // snc == j // snc else 21)
             for j in range(nnodes)] for i in range(nnodes)]
    return m, dist


# --------------------------------------------------------------------------
# Opteron machines of Moreaud 2007 (seed 001)
# --------------------------------------------------------------------------

OPTERON_MODEL = "Dual Core AMD Opteron(tm) Processor 1.8 GHz"
OPTERON_MEM_PER_NODE = 2 * GiB      # ASSUMED: the seed gives no memory size


def opteron_machine(name, nnodes, source):
    """nnodes dual-core 1.8 GHz Opterons, one NUMA node per socket."""
    ncpu = 2 * nnodes
    m = machine_obj(range(ncpu), range(nnodes), [
        ("JostleFake", name), ("JostleSource", source),
        ("Architecture", "x86_64")])
    pkgs = []
    for s in range(nnodes):
        cpus = [2 * s, 2 * s + 1]
        pkg = m.add(Obj("Package", s, cpus, [s], infos=[
            ("CPUVendor", "AuthenticAMD"), ("CPUFamilyNumber", 15),
            ("CPUModel", OPTERON_MODEL)]))
        pkg.add(numanode(s, cpus, OPTERON_MEM_PER_NODE))
        for c, pu in enumerate(cpus):
            # K8 dual-core: private 1 MB L2 (16-way), 64 KB L1d/L1i (2-way) per core
            pkg.add(core_with_caches(pu, c, s, [
                ("L2Cache", 1024 * KiB, 2, 16, 0),
                ("L1Cache", 64 * KiB, 1, 2, 1),
                ("L1iCache", 64 * KiB, 1, 2, 2)]))
        pkgs.append(pkg)
    return m, pkgs


def infinihost3(bus, bridge_bus):
    """Mellanox InfiniHost III Ex (MT25208) behind a PCIe root port."""
    br = pcibridge("0000:%02x:00.0" % bridge_bus, 0x10de, 0x005d, bus, bus,
                   pcie_gbps(8, 1))
    dev = br.add(pcidev("0000:%02x:00.0" % bus, 0x0c06, 0x15b3, 0x6282,
                        0x15b3, 0x6282, 0xa0, pcie_gbps(8, 1), [
                            ("PCIVendor", "Mellanox Technologies"),
                            ("PCIDevice", "MT25208 [InfiniHost III Ex]")]))
    dev.add(osdev("ib0", OSDEV_NETWORK, [("Port", "1")]))
    dev.add(osdev("mthca0", OSDEV_OPENFABRICS, [
        ("NodeGUID", "0002:c902:0000:0001"), ("Port1State", "4")]))
    return br


def dalton():
    """2 NUMA nodes, Myri-10G + QsNet II (Elan4), both on node 0 (sec. 2.2)."""
    m, pkgs = opteron_machine("dalton", 2,
                              "Moreaud 2007 sec. 2.2 (Dalton), fig. 2.2")
    hb = pkgs[0].add(hostbridge(0x00, 0x05))
    br = hb.add(pcibridge("0000:00:0e.0", 0x10de, 0x005d, 0x04, 0x04,
                          pcie_gbps(8, 1)))
    myri = br.add(pcidev("0000:04:00.0", 0x0200, 0x14c1, 0x0008, 0x14c1,
                         0x0008, 0, pcie_gbps(8, 1), [
                             ("PCIVendor", "Myricom Inc."),
                             ("PCIDevice", "Myri-10G Dual-Protocol NIC")]))
    myri.add(osdev("myri0", OSDEV_NETWORK))
    # QsNet II Elan4 is a PCI-X card (seed: "bus PCI"): no PCIe link speed.
    brx = hb.add(pcibridge("0000:00:0f.0", 0x10de, 0x005e, 0x05, 0x05, 0.0))
    elan = brx.add(pcidev("0000:05:01.0", 0x0280, 0x14fc, 0x0002, 0x14fc,
                          0x0002, 1, 0.0, [
                              ("PCIVendor", "Quadrics Ltd"),
                              ("PCIDevice", "QsNetII Elan4")]))
    elan.add(osdev("eip0", OSDEV_NETWORK))
    return m, opteron_2node_distances()


def infini():
    """2 NUMA nodes, InfiniBand (InfiniHost III) on node 1 (sec. 2.2)."""
    m, pkgs = opteron_machine("infini", 2,
                              "Moreaud 2007 sec. 2.2 (Infini), fig. 2.2")
    hb = pkgs[1].add(hostbridge(0x40, 0x41))
    hb.add(infinihost3(0x41, 0x40))
    return m, opteron_2node_distances()


def opteron_2node_distances():
    # one HyperTransport hop between the two nodes; same scale as hagrid
    # (10 local, +10 per link of ~34-40 ns)
    return [[10, 20], [20, 10]]


# Table 3.1 of Moreaud 2007: overhead in ns of an access from processor Ci
# (row) to memory bank Mj (column) over the local access, machine Hagrid.
def _read_table_3_1():
    """The seed's table (share/topologies/hagrid-table-3.1.csv): rows of ints, labels dropped."""
    here = os.path.dirname(os.path.abspath(__file__))
    rows = []
    with open(os.path.join(here, "hagrid-table-3.1.csv"), encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#") and not line.startswith(","):
                rows.append([int(x) for x in line.strip().split(",")[1:]])
    return rows


HAGRID_TABLE_3_1_NS = _read_table_3_1()
HAGRID_LINK_NS = 34   # "multiples of about 34 ns" (sec. 3.3.2)


def hagrid():
    """8 NUMA nodes (8 dual-core Opterons), InfiniBand near node 0."""
    m, pkgs = opteron_machine("hagrid", 8,
                              "Moreaud 2007 sec. 2.2 (Hagrid), fig. 2.2, table 3.1")
    hb = pkgs[0].add(hostbridge(0x00, 0x01))
    hb.add(infinihost3(0x01, 0x00))
    # SLIT-like values: 10 for local, +10 per ~34 ns of measured overhead
    # (a monotone transform of table 3.1: keeps its levels, asymmetries and
    # "half multiples").
    dist = [[10 + round(v * 10 / HAGRID_LINK_NS) for v in row]
            for row in HAGRID_TABLE_3_1_NS]
    return m, dist


# --------------------------------------------------------------------------
# memory-only NUMA node: not a published machine, a shape for the placement
# engine (KNL MCDRAM, HBM, CXL memory expanders look like this to hwloc 2.x)
# --------------------------------------------------------------------------

def memonly():
    """2 packages x 4 cores, one NUMA node each (0 and 1), plus NUMA node 2:
    memory only (a CXL expander), a memory child of the Machine with no CPU of
    its own (empty cpuset).  No NIC."""
    sockets, cores = 2, 4
    ncpu = sockets * cores
    m = machine_obj(range(ncpu), range(sockets + 1), [
        ("JostleFake", "memonly"),
        ("JostleSource", "synthetic: 2 x 4 cores + a memory-only NUMA node (CXL)"),
        ("Architecture", "x86_64")])
    m.add(Obj("NUMANode", sockets, [], [sockets],
              attrs={"local_memory": 16 * GiB, "subtype": "CXL-DRAM"}))
    for s in range(sockets):
        cpus = list(range(s * cores, (s + 1) * cores))
        pkg = m.add(Obj("Package", s, cpus, [s], infos=[("CPUVendor", "GenuineIntel")]))
        pkg.add(numanode(s, cpus, 8 * GiB))
        for c, pu in enumerate(cpus):
            pkg.add(core_with_caches(pu, c, s, [
                ("L2Cache", 1024 * KiB, 2, 16, 0),
                ("L1Cache", 32 * KiB, 1, 8, 1)]))
    # 10 local, 21 the other package, 26 the expander (behind the CXL link)
    dist = [[10, 21, 26], [21, 10, 26], [26, 26, 10]]
    return m, dist


TOPOLOGIES = {
    "henri.xml": henri,
    "opteron-2numa-nic0.xml": dalton,
    "opteron-2numa-nic1.xml": infini,
    "opteron-8numa.xml": hagrid,
    "memonly-numa.xml": memonly,
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if a file is missing or differs")
    ap.add_argument("--outdir", type=Path, default=HERE)
    args = ap.parse_args(argv)
    status = 0
    for fname, build in TOPOLOGIES.items():
        m, dist = build()
        text = serialize(m, dist)
        path = args.outdir / fname
        if args.check:
            if not path.exists() or path.read_text() != text:
                print("differs: %s" % path)
                status = 1
        else:
            path.write_text(text)
            print("wrote %s" % path)
    return status


if __name__ == "__main__":
    sys.exit(main())
