"""`jostle place --comm`: where the communication threads and their buffers should go, from
the NICs' NUMA nodes and the distances (Moreaud 2007, sec. 3.2 and 3.3.1), with the reasons
and what could not be known.  The decision is jostle-bench's (src/topo/nic_place.c), the one
every benchmark applies with --comm-core auto --comm-mem auto.

`jostle place --ranks N --policy numa --progress numa`: MPI ranks and their progress threads
on one host (Taboada 2016, algorithms 1 and 2; jostle.run.placement)."""

import argparse
import json
import sys

from .. import binary
from ..run import placement
from ..errors import UsageError
from . import _common
from .topo import advice, describe

ORDER = 7

EXAMPLES = """examples:
  jostle place --comm                                   this machine, one comm thread
  jostle place --comm --threads 4 --input share/topologies/opteron-8numa.xml
  jostle place --comm --favor bandwidth                 NICs on several nodes: weigh bandwidth
  jostle place --comm --where far --json                the 'bad placement' of the NUIOA study

  jostle place --ranks 1:8 --policy numa --progress numa --topology FILE.xml
                                                        the seed's figures 1b and 2b
  jostle place --ranks 6 --policy numa --progress numa --write-dir out/
                                                        + rankfile, SLURM and MPICH lists

Apply it in a benchmark: jostle-bench BENCH --comm-core auto --comm-mem auto (local rank k of a
host takes comm thread k); near and far are the NIC's node and the farthest from it."""


def register(sub):
    p = sub.add_parser("place", help="recommend cores and NUMA nodes for communication threads",
                       description="Recommend the cores of communication threads and the NUMA "
                                   "node of their buffers: the NIC's node, then the nodes "
                                   "nearest it (hierarchical placement).",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--comm", action="store_true", help="place communication threads (required)")
    p.add_argument("--threads", type=_common.positive_int, default=1, metavar="K",
                   help="communication threads (e.g. ranks per host); default 1")
    p.add_argument("--nic", metavar="NAME", help="the NIC used (default: every NIC of known "
                                                 "locality)")
    p.add_argument("--favor", choices=("latency", "bandwidth"),
                   help="NICs on different nodes: what decides (default latency)")
    p.add_argument("--where", choices=("auto", "near", "far"), default="auto",
                   help="auto: the advice; near/far: the NIC's node / the farthest one")
    p.add_argument("--input", "--topology", metavar="FILE.xml",
                   help="a saved hwloc XML topology")
    g = p.add_argument_group("ranks and progress threads (Taboada 2016)")
    g.add_argument("--ranks", metavar="N|A:B",
                   help="place N ranks of a host (A:B: one row per count, as the seed's figures)")
    g.add_argument("--policy", choices=placement.RANK_POLICIES, default="numa",
                   help="ranks: packed, scatter (NUMA-blind) or numa (algorithm 1; default)")
    g.add_argument("--progress", choices=placement.PROGRESS_POLICIES, default="numa",
                   help="progress threads: bind (the rank's core), next, numa (algorithm 2; "
                        "default)")
    g.add_argument("--host", metavar="NAME", help="host name in the rankfile (default: this one)")
    g.add_argument("--oversubscribe", action="store_true",
                   help="allow more ranks than the topology's cores (they share cores; warned)")
    g.add_argument("--write-dir", type=_common.out_dir_type, metavar="DIR",
                   help="write rankfile, slurm-cpu-bind.txt and mpich-bind.txt there")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--bench", metavar="PATH", help="the jostle-bench binary")
    p.add_argument("--mpi", choices=("auto", "openmpi", "mpich"), default="auto")
    p.set_defaults(func=main)


def choose(a: dict, where: str) -> list:
    """[(thread, core, numa)] for WHERE; far is refused where every node is near the NIC."""
    if a.get("home_numa") is None:
        if where != "auto":
            raise UsageError(f"--where {where}: {a['why']}")
        return [(t["thread"], t["core"], None) for t in a["threads"]]
    if where == "far" and a["far_numa"] in (a.get("near_numa") or [a["home_numa"]]):
        raise UsageError("--where far is not allowed here: every NUMA node is near the NIC (a "
                         "machine with one NUMA node, or a NIC above all of them), so every core "
                         "and buffer is as near the NIC as any other")
    if where == "auto":
        return [(t["thread"], t["core"], t["numa"]) for t in a["threads"]]
    node = a["home_numa"] if where == "near" else a["far_numa"]
    return [(t["thread"], t[f"{where}_core"], node) for t in a["threads"]]


def text(a: dict, t: dict, rows, where: str) -> str:
    m = t["machine"]
    out = [f"topology  {a['topology']}" + ("" if a["this_system"] else " (not this system)")]
    for nic in m.get("nics") or []:
        out.append(f"NIC       {nic['name']} ({nic['kind']}, PCI {nic.get('pci') or '-'}), "
                   + placement.nic_locality(nic))
    out.append(f"home      {a['why']}")
    if a.get("order"):
        out.append("by distance from it: " + ", ".join(f"{o['numa']} ({o['distance']})"
                                                      for o in a["order"]))
    whys = {x["thread"]: x["why"] for x in a["threads"]}
    for k, core, numa in rows:
        mem = "first touch (no policy)" if numa is None else f"NUMA node {numa}"
        reason = whys[k] if where == "auto" else f"--comm-core {where} --comm-mem {where}"
        out.append(f"thread {k}  core {core}, buffers on {mem}   [{reason}]")
    out.append("apply     jostle-bench BENCH --comm-core {0} --comm-mem {0}".format(where)
               + (f" --nic {a['nic']}" if a.get("nic") else "")
               + (f" --favor {a['favor']}" if where == "auto" and a["favor"] != "latency" else ""))
    out += [f"unknown   {u}" for u in a.get("unknown") or []]
    return "\n".join(out)


def ranks_main(args):
    r = args.ranks
    parts = r.split(":")
    if len(parts) > 2 or not all(x.isdigit() and int(x) >= 1 for x in parts) or \
            int(parts[0]) > int(parts[-1]):
        raise UsageError(f"--ranks '{r}' is not allowed: expected N or A:B with 1 ≤ A ≤ B")
    bench = binary.find_bench(args.mpi, args.bench)
    p = placement.query(bench, r, args.policy, args.progress, args.input)
    most, cores = int(parts[-1]), p["cores"]
    warnings = []
    if most > cores:
        if not args.oversubscribe:
            raise UsageError(f"--ranks '{r}' is not allowed on {p['topology']}: it has {cores} "
                             f"cores; allowed: at most {cores} ranks, or --oversubscribe to let "
                             "ranks share cores")
        warnings.append(f"{most} ranks on {cores} cores: ranks share cores (oversubscribed), "
                        "each gets a fraction of one")
        print(f"jostle: warning: {warnings[0]}", file=sys.stderr)
    files = placement.launcher_files(p, args.host or "")
    if args.json:
        print(json.dumps({**p, "launchers": files, "warnings": warnings}, indent=1))
    else:
        print(f"topology {p['topology']}: ranks {args.policy}, progress threads "
              f"{args.progress} (logical cores)\n" + placement.draw(p))
        print(f"\nfor {files['ranks']} ranks:\n  Open MPI  mpirun --rankfile FILE  (FILE below)\n"
              f"  SLURM     srun {files['slurm']}   (with progress cores: "
              f"{files['slurm_with_progress']})\n  MPICH     mpiexec {files['mpich']}\n"
              + "".join(f"  {line}\n" for line in files["rankfile"].splitlines()))
    if args.write_dir:
        from pathlib import Path
        d = Path(args.write_dir)
        try:
            d.mkdir(parents=True, exist_ok=True)
            (d / "rankfile").write_text(files["rankfile"])
            (d / "slurm-cpu-bind.txt").write_text(files["slurm"] + "\n")
            (d / "mpich-bind.txt").write_text(files["mpich"] + "\n")
        except OSError as e:
            raise UsageError(f"--write-dir '{d}' is not writable: {e.strerror}") from None
    return 0


def main(args):
    if args.ranks is not None:
        if args.comm:
            raise UsageError("--comm and --ranks place different things: give one of them")
        return ranks_main(args)
    if not args.comm:
        raise UsageError("say what to place: --comm (communication threads and their buffers) "
                         "or --ranks N (MPI ranks and their progress threads)")
    bench = binary.find_bench(args.mpi, args.bench)
    t = describe(bench, args.input)
    a = advice(bench, args.input, args.nic, args.favor, args.threads)
    rows = choose(a, args.where)
    if args.json:
        print(json.dumps({**a, "where": args.where, "placement": [
            {"thread": k, "core": core, "numa": numa} for k, core, numa in rows]}, indent=1))
    else:
        print(text(a, t, rows, args.where))
    return 0
