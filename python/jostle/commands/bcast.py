"""`jostle bcast`: the dynamic-broadcast benchmark, on real ranks or simulated at scale.

Real ranks: one run of `jostle-bench bcast` under the MPI launcher.
Simulated (--simulate): one run per node count under SimGrid's smpirun, each on a
generated cluster platform (jostle.simgrid), with the SimGrid build of jostle-bench
(build/simgrid/jostle-bench). The campaign resumes: node counts already complete are
skipped.
"""

import argparse
import sys

from .. import launch, simgrid
from ..campaign import Campaign, RunSpec
from ..errors import UsageError
from ..progress import Progress
from ..sizes import parse_sizes
from . import _common as c

ORDER = 30
ROUTINGS = ("flat", "binomial", "chain", "pipeline-chain", "pipeline-tree", "two-tree", "auto", "mpi_bcast")
DEFAULT_SIZES = "8,1K,64K,1M,16M"
SIM_SIZES = "8,64K,1M"
SIM_ROUTINGS = "flat,binomial,pipeline-chain,pipeline-tree,two-tree,auto,mpi_bcast"

EXAMPLES = """examples:
  jostle bcast                                        4 ranks here, every routing, k = 3
  jostle bcast --ranks 8 --recipients 1,3,7 --sizes 8:64M
  jostle bcast --routing auto,mpi_bcast --hosts n1,n2,n3,n4
  jostle bcast --simulate --nodes 4:256 --bandwidth 10Gbps --latency 1us --speed 1Gf
  jostle bcast --simulate --nodes 4:64 --sizes 1M --routing auto,flat,mpi_bcast

Real runs go to OUTPUT-DIR/CAMPAIGN/NAME.jsonl; a simulated sweep writes one run per
node count (bcast-sim-<N>.jsonl) and the platform files beside them. A run that is
already complete is not run again."""


def routing_list(text):
    items = [x.strip() for x in text.split(",")]
    for x in items:
        if x not in ROUTINGS and x != "all":
            raise argparse.ArgumentTypeError(
                f"'{x}' is not a routing; expected {', '.join(ROUTINGS)} or all")
    return ",".join(items)


def recipients_list(text):
    items = [x.strip() for x in text.split(",")]
    for x in items:
        if x != "all" and not (x.isdigit() and int(x) >= 1):
            raise argparse.ArgumentTypeError(
                f"'{x}' is not a number of recipients; expected whole numbers ≥ 1 or all")
    return ",".join(items)


def bytes_type(text):
    t = text.strip()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:].upper(), 1)
    digits = t[:-1] if mult > 1 else t
    if not digits.isdigit():
        raise argparse.ArgumentTypeError(f"'{text}' is not a byte count; expected e.g. 0, 16K, 1M")
    return str(int(digits) * mult)


def register(sub):
    p = sub.add_parser("bcast", help="dynamic broadcasts against MPI_Bcast (real or simulated)",
                       description="Time until the last of k recipients holds the data of a "
                                   "broadcast: each routing of jt_dbcast and MPI_Bcast.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("sweep")
    g.add_argument("--sizes", metavar="SPEC",
                   help=f"payload sizes (default {DEFAULT_SIZES}; simulated {SIM_SIZES})")
    g.add_argument("--recipients", type=recipients_list, metavar="K[,K…]|all", default="all",
                   help="numbers of recipients among ranks 1..P-1, spread evenly (default all)")
    g.add_argument("--routing", type=routing_list, metavar="R[,R…]",
                   help=f"{', '.join(ROUTINGS)} or all (default all; simulated {SIM_ROUTINGS})")
    g.add_argument("--ranks", type=c.ranks_type, default=4, metavar="N",
                   help="ranks of a real run (default 4; ≥ 2)")
    g.add_argument("--hosts", type=c.hosts_type, metavar="A,B", help="hosts of a real run")
    g.add_argument("--segment", type=bytes_type, metavar="BYTES",
                   help="segment of the pipelined routings (default: the model's choice)")
    g.add_argument("--progress-mode", choices=("auto", "thread", "poll"),
                   help="dbcast forwarding (default auto: thread when MPI_THREAD_MULTIPLE)")
    g.add_argument("--check", action="store_true", help="verify every payload (real runs)")
    simgrid.add_options(p, "1Gf", "node speed, flop/s")
    h = p.add_argument_group("repetitions")
    h.add_argument("--min-reps", type=c.positive_int, metavar="N",
                   help="samples per point at least (100; simulated 2: it is deterministic)")
    h.add_argument("--max-time", type=c.positive_float, metavar="S", help="time cap per point")
    h.add_argument("--warmup", type=c.nonneg_int, metavar="N", help="untimed samples first")
    c.add_launch_options(p)
    c.add_output_options(p, campaign_default="bcast")
    p.add_argument("--name", type=c.name_type, help="run name (default bcast-<ranks>r-<hash of the options>: the same command resumes)")
    p.add_argument("--dry-run", action="store_true", help="print the command lines and exit")
    p.set_defaults(func=main)


def _ks(spec, P, where):
    for x in spec.split(","):
        if x != "all" and int(x) > P - 1:
            raise UsageError(f"--recipients '{x}' is not allowed with {P} {where}: expected "
                             f"1 to {P - 1} (every rank but the root) or all")


def bench_args(args, spec, routing, sim) -> list:
    out = ["--sizes", spec, "--routing", routing, "--recipients", args.recipients]
    reps = {"min_reps": args.min_reps or (2 if sim else None),
            "warmup": args.warmup if args.warmup is not None else (1 if sim else None),
            "max_time": args.max_time if args.max_time is not None else (0 if sim else None)}
    for k, v in reps.items():
        if v is not None:
            out += ["--" + k.replace("_", "-"), str(v)]
    if args.segment is not None:
        out += ["--segment", args.segment]
    if args.progress_mode:
        out += ["--progress-mode", args.progress_mode]
    if args.check and not sim:
        out.append("--check")
    return out


def main(args):
    simgrid.check_simulation(args)
    if args.simulate:
        return simulate(args)
    spec = args.sizes or DEFAULT_SIZES
    sizes = parse_sizes(spec)
    _ks(args.recipients, args.ranks, "ranks")
    routing = args.routing or "all"
    c.check_memory(sizes, args.ranks, option="--sizes", spec=spec)
    nroutes = len(ROUTINGS) if "all" in routing.split(",") else len(routing.split(","))
    npts = nroutes * len(args.recipients.split(","))
    timeout = args.timeout or npts * launch.estimate_timeout(
        sizes, args.min_reps or 100, args.max_time, args.warmup or 10)
    run_args = bench_args(args, spec, routing, False)
    name = args.name or c.default_name(f"bcast-{args.ranks}r", run_args, args.ranks, args.hosts)
    run = RunSpec(name, "bcast", run_args, args.ranks, args.hosts or [], timeout)
    camp = Campaign(f"{args.output_dir}/{args.campaign}", [run])
    config = c.launch_config(args)
    if args.dry_run:
        return camp.dry_run(config, args.quiet)
    camp.run(config, Progress(), quiet=args.quiet)
    print(f"jostle: results in {camp.output(run)}", file=sys.stderr)
    return 0


def simulate(args):
    nodes = simgrid.parse_nodes(args.nodes)
    spec = args.sizes or SIM_SIZES
    parse_sizes(spec)   # refused here, with the value named, before any launch
    _ks(args.recipients, min(nodes), "simulated nodes (the smallest of --nodes)")
    routing = args.routing or SIM_ROUTINGS
    return simgrid.run_sweep(args, "bcast", nodes, bench_args(args, spec, routing, True), 4.0)
