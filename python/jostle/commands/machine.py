"""`jostle machine`: what jostle-bench sees of this machine (hwloc), in short."""

import json

from .. import binary
from ..run import bench_query
from ..run.placement import nic_locality

ORDER = 5


def register(sub):
    p = sub.add_parser("machine", help="summarise this machine as jostle-bench sees it",
                       description="Print the machine jostle-bench sees (CPU, cores, NUMA, NICs) "
                                   "without an MPI launch.")
    p.add_argument("--bench", metavar="PATH", help="the jostle-bench binary")
    p.add_argument("--mpi", choices=("auto", "openmpi", "mpich"), default="auto")
    p.add_argument("--topology", metavar="FILE.xml", help="describe this hwloc XML file instead")
    p.add_argument("--json", action="store_true", help="print the JSON as jostle-bench gives it")
    p.set_defaults(func=main)


def summary(m: dict) -> str:
    mem = m.get("memory_bytes")
    lines = [f"CPU       {m.get('cpu', '?')}",
             f"cores     {m.get('cores', '?')} ({m.get('pus', '?')} hardware threads), "
             f"{m.get('numa_nodes', '?')} NUMA node(s)"
             + (f", {mem / 2**30:.1f} GiB" if isinstance(mem, (int, float)) else ""),
             f"topology  {m.get('topology', '?')}"]
    for n in m.get("nics") or []:
        lines.append(f"NIC       {n.get('name', '?')} ({n.get('kind', '?')}), {nic_locality(n)}")
    if not m.get("nics"):
        lines.append("NIC       none found (intra-node runs only)")
    return "\n".join(lines)


def main(args):
    m = bench_query.bench_machine(binary.find_bench(args.mpi, args.bench), args.topology)
    print(json.dumps(m, indent=1) if args.json else summary(m))
    return 0
