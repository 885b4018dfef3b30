"""`jostle topo`: the machine as hwloc sees it (packages, NUMA nodes, cores, caches, distances,
NICs), as text, JSON or a picture; `--measure` adds the memory-latency matrix of Moreaud 2007
(table 3.1: overhead over local access) and the links it implies (jostle.analysis.topo_links).

Everything measured or read from hwloc comes from jostle-bench's no-MPI queries (--topo,
--latency-matrix); this module only formats and draws.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .. import binary
from ..analysis import bounds, topo_links
from ..run import bound_probes
from ..binary import ask
from ..errors import JostleError, UsageError
from . import _common
from .run import Step
from .. import lazy
np = lazy.module("numpy")

ORDER = 6

EXAMPLES = """examples:
  jostle topo                                   this machine, as text
  jostle topo --json                            the same for a program
  jostle topo --picture machine.png             cores, NUMA nodes and NICs drawn
  jostle topo --input share/topologies/opteron-8numa.xml
  jostle topo --export this.xml                 save this machine (I/O devices kept)
  jostle topo --measure                         + memory latency/bandwidth node to node
  jostle topo --matrix table31.csv --graph g.png   links inferred from a saved matrix"""


def register(sub):
    p = sub.add_parser("topo", help="the machine as hwloc sees it; memory-latency matrix",
                       description="Describe the machine (or a saved hwloc XML topology): "
                                   "packages, NUMA nodes with memory, cores, caches, distances "
                                   "and every NIC with its PCI bus id, link speed and NUMA node.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--input", metavar="FILE.xml", help="a saved hwloc XML topology (I/O kept)")
    p.add_argument("--export", type=_common.out_file_type, metavar="FILE.xml", help="save the topology as hwloc XML")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--picture", type=_common.out_file_type, metavar="FILE.png", help="draw cores, NUMA nodes and NICs")
    g = p.add_argument_group("memory-latency matrix (Moreaud 2007, sec. 3.3.2)")
    g.add_argument("--measure", action="store_true",
                   help="measure ns per access (pointer chasing) and copy GB/s from a core of "
                        "each NUMA node to the memory of each (this machine only)")
    g.add_argument("--bytes", metavar="B", type=_common.bytes_type, help="buffer per probe (default: 4 x the largest "
                                                "cache, at least 64M)")
    g.add_argument("--no-bandwidth", action="store_true", help="latency only (faster)")
    g.add_argument("--matrix", metavar="FILE.csv",
                   help="infer links from a saved n x n latency matrix (ns) instead")
    g.add_argument("--rel-tol", type=_common.positive_float, default=topo_links.DEFAULT_REL_TOL, metavar="F",
                   help="link tolerance (default %(default)s of the minimal overhead)")
    g.add_argument("--graph", type=_common.out_file_type, metavar="FILE.png", help="draw the inferred links")
    p.add_argument("--bench", metavar="PATH", help="the jostle-bench binary")
    p.add_argument("--mpi", choices=("auto", "openmpi", "mpich"), default="auto")
    p.set_defaults(func=main)


# ---------------------------------------------------------------- queries

def describe(bench, xml=None, export=None) -> dict:
    args = ["--topo"] + (["--topology", xml] if xml else []) + (["--export", export] if export else [])
    return ask(bench, *args)


def advice(bench, xml=None, nic=None, favor=None, threads=1) -> dict:
    args = ["--place", "--threads", str(threads)]
    for flag, v in (("--topology", xml), ("--nic", nic), ("--favor", favor)):
        if v:
            args += [flag, v]
    return ask(bench, *args)


def measure(bench, nbytes=None, bandwidth=True) -> dict:
    args = ["--latency-matrix"] + (["--bytes", nbytes] if nbytes else [])
    return ask(bench, *args, *([] if bandwidth else ["--no-bandwidth"]))


def read_matrix(path) -> np.ndarray:
    """A latency matrix from CSV, refused (exit 2) when not square, not numeric or negative."""
    if not Path(path).is_file():
        raise UsageError(f"--matrix '{path}' is not a file")
    try:
        m = topo_links.read_matrix_csv(path)
    except ValueError as e:
        raise UsageError(f"--matrix '{path}': {e}") from None
    if (m < 0).any():
        i, j = np.argwhere(m < 0)[0]
        raise UsageError(f"--matrix '{path}': entry row {i} column {j} is {m[i, j]:g}; "
                         "latencies must be ≥ 0 ns")
    return m


# ---------------------------------------------------------------- text

def _gib(b):
    return f"{b / 2**30:.1f} GiB" if isinstance(b, (int, float)) else "?"


def _bytes(b):
    for unit, k in (("MiB", 20), ("KiB", 10)):
        if b >= 1 << k and b % (1 << k) == 0:
            return f"{b >> k} {unit}"
    return f"{b} B"


def text(t: dict) -> str:
    m = t.get("machine") or {}
    out = [f"topology   {m.get('topology')}" + ("" if m.get("this_system") else
                                                 "  (not this system: nothing can be bound)"),
           f"CPU        {m.get('cpu')}",
           f"cores      {m.get('cores')} ({m.get('pus')} hardware threads) in "
           f"{m.get('packages')} package(s), {m.get('numa_nodes')} NUMA node(s), "
           f"{_gib(m.get('memory_bytes'))}"]
    for p in t.get("packages") or []:
        out.append(f"package {p['index']}  cores {_ranges(p['cores'])}, NUMA nodes "
                   f"{_ranges(p['numa_nodes'])}")
    for n in t.get("numa_nodes") or []:
        out.append(f"NUMA {n['index']}     {_gib(n.get('memory_bytes'))}, cores "
                   f"{_ranges(n['cores'])} (OS index {n.get('os_index')})")
    caches = [f"L{x['level']}{'' if x['type'] == 'unified' else x['type'][0]} "
              f"{_bytes(x['bytes'])} x{x['count']} (cores each {x['cores_each']})"
              for x in t.get("caches") or []]
    if caches:
        out.append("caches     " + "; ".join(caches))
    d = t.get("distances") or {}
    vals = d.get("values") or []
    if len(vals) > 1:
        out.append(f"distances  ({d.get('source')})")
        out += ["  " + line for line in topo_links.format_table(vals, "N", "N", "{:d}").splitlines()]
    for nic in m.get("nics") or []:
        node = "NUMA node unknown" if nic.get("numa") is None else f"NUMA node {nic['numa']}"
        link = f", link {nic['link_gbps']:.2f} GB/s" if nic.get("link_gbps") else ", link speed unknown"
        out.append(f"NIC        {nic['name']} ({nic.get('kind')}), PCI {nic.get('pci') or '-'}"
                   f"{link}, {node}")
    if not m.get("nics"):
        out.append("NIC        none found by hwloc")
    return "\n".join(out)


def _ranges(xs) -> str:
    xs = sorted(xs)
    if not xs:
        return "-"
    parts, start = [], xs[0]
    for a, b in zip(xs, xs[1:] + [None]):
        if b != a + 1:
            parts.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return ",".join(parts)


def matrix_text(lat, bw=None, nic_nodes=(), rel_tol=topo_links.DEFAULT_REL_TOL,
                graph=None) -> tuple:
    """The tables of seed table 3.1 and the inferred links, as (text, summary dict)."""
    lat = np.asarray(lat, dtype=float)
    n = len(lat)
    out = ["memory latency (ns per access), row = CPU node, column = memory node:",
           topo_links.format_table(lat, fmt="{:.1f}")]
    info = {"latency_ns": lat.tolist()}
    if bw is not None:
        out += ["copy bandwidth (GB/s, STREAM bytes):", topo_links.format_table(bw, fmt="{:.2f}")]
        info["bandwidth_gbs"] = np.asarray(bw).tolist()
    if n < 2:
        out.append("one NUMA node: the matrix is 1 x 1 (the local latency only); there is no "
                   "overhead over local and no link to infer")
        return "\n".join(out), info
    over = topo_links.overhead_table(lat, unit="ns")
    out += ["overhead over local (ns), as seed table 3.1:", topo_links.format_table(over)]
    if np.all(np.diag(lat) > 0):
        out += ["overhead over local (%):",
                topo_links.format_table(topo_links.overhead_table(lat, unit="percent"))]
    try:
        links, hops, levels = topo_links.infer_links(lat, rel_tol=rel_tol)
    except ValueError as e:
        out.append(f"no link inference: {e}")
        return "\n".join(out), info
    cost = topo_links.link_cost(lat, rel_tol)
    asym = topo_links.asymmetric_pairs(lat, rel_tol=rel_tol)
    mism = topo_links.level_mismatches(hops, levels)
    out.append(f"link cost {cost:.1f} ns; {len(links)} link(s): "
               + " ".join(f"{i}-{j}" for i, j in links))
    out += [f"asymmetric {i}<->{j}: {a:.1f} vs {b:.1f} ns" for i, j, a, b in asym]
    out += [f"level mismatch {i}->{j}: {h} hop(s) on the inferred graph, measured {lv:.2f} links"
            for i, j, h, lv in mism]
    info.update(links=[list(x) for x in links], link_cost_ns=cost,
                asymmetric=[list(x) for x in asym], hops=hops.tolist())
    if graph:
        from ..figures.topo import draw_links
        draw_links(links, n, graph, highlight=nic_nodes,
                   title=f"{len(links)} links inferred (link ≈ {cost:.0f} ns)")
        out.append(f"graph: {graph}")
    return "\n".join(out), info


# ---------------------------------------------------------------- the command

def main(args):
    if args.measure and args.matrix:
        raise UsageError("--measure and --matrix exclude each other: measure this machine, or "
                         "read a saved matrix")
    if args.measure and args.input:
        raise UsageError(f"--measure binds threads and memory on this machine; it cannot "
                         f"measure --input '{args.input}'")
    if args.graph and not (args.measure or args.matrix):
        raise UsageError("--graph draws the links inferred by --measure or --matrix")
    mat = read_matrix(args.matrix) if args.matrix else None
    bench = binary.find_bench(args.mpi, args.bench)
    t = describe(bench, args.input, args.export)
    nic_nodes = sorted({x["numa"] for x in t["machine"].get("nics") or [] if x.get("numa") is not None})
    extra, info = "", {}
    if args.measure:
        r = measure(bench, args.bytes, not args.no_bandwidth)
        extra, info = matrix_text(r["latency_ns"], r.get("bandwidth_gbs"), nic_nodes,
                                  args.rel_tol, args.graph)
        info["probe"] = {k: r[k] for k in ("bytes", "accesses", "rounds", "cores", "notes")}
        extra = (f"probe: {_bytes(r['bytes'])} buffer, {r['accesses']} dependent accesses x "
                 f"{r['rounds']} rounds (median), from cores {r['cores']}\n" + extra
                 + "".join(f"\nnote: {x}" for x in r["notes"] if "1 x 1" not in x))
    elif mat is not None:
        extra, info = matrix_text(mat, None, nic_nodes, args.rel_tol, args.graph)
    if args.picture:
        from ..figures.topo import machine_figure
        fig = machine_figure(t)
        fig.savefig(args.picture, dpi=120, bbox_inches="tight")
    if args.json:
        print(json.dumps({**t, **({"matrix": info} if info else {})}, indent=1))
    else:
        print(text(t) + ("\n" + extra if extra else ""))
    for path in (args.export, args.picture):
        if path:
            print(f"jostle: wrote {path}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------- jostle run

def step_topo(ctx):
    """`jostle run`: the machine's picture and the placement advice, saved for the report."""
    try:
        t = describe(ctx.config.bench)
        a = advice(ctx.config.bench, threads=max(1, min(4, len(t.get("numa_nodes") or []))))
    except JostleError as e:  # e.g. a jostle-bench older than these queries: the rest still runs
        ctx.notes.append(f"no machine picture or placement advice: {e}")
        return
    ctx.dir.mkdir(parents=True, exist_ok=True)
    (ctx.dir / "topo.json").write_text(json.dumps(t, indent=1) + "\n")
    (ctx.dir / "placement.json").write_text(json.dumps(a, indent=1) + "\n")
    print(text(t), file=sys.stderr)




def step_bounds(ctx):
    """`jostle run`: the bounds the report sets the headline numbers against (bounds.py)."""
    try:
        found = bound_probes.measure(ctx.config.bench)
    except JostleError as e:  # a bench without --latency-matrix: the bounds are said unknown
        ctx.notes.append(f"bounds not measured (the report says them unknown): {e}")
        return
    ctx.dir.mkdir(parents=True, exist_ok=True)
    bounds.save(ctx.dir, found)
    lat, copy, triad = found["memory_latency_ns"], found["copy_GBps"], found.get("triad_GBps")
    c2c = "; ".join(f"{pair} {v['median']:.3g} ns" for pair, v in (found.get("c2c_ns") or {}).items())
    print(f"jostle: bounds: memory latency {f'{lat:.3g} ns' if lat else 'unknown'}, one core's "
          f"copy {f'{copy:.3g} GB/s' if copy else 'unknown'}, the triad on all cores "
          f"{f'{triad:.3g} GB/s' if triad else 'unknown'}, core-to-core latency (cores A:B, one "
          f"way) {c2c or 'unknown'}", file=sys.stderr)


RUN_STEPS = [
    Step("topo", "the machine as hwloc sees it and the comm placement advice (for the report)",
         step_topo, order=10),
    Step("bounds", "measure what the report's headline numbers are set against: the "
                   "core-to-core latency, one core's copy bandwidth and the triad on all cores",
         step_bounds,
         order=15),
]
