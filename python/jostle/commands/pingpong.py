"""`jostle pingpong`: one ping-pong run, launched and recorded in a campaign."""

import argparse
import math
import re
import sys

from .. import figures, launch
from ..campaign import Campaign, RunSpec, repeated
from ..errors import UsageError
from ..figures import pingpong as pingpong_figures
from ..progress import Progress
from ..results import load_run
from ..sizes import cap_sizes, parse_sizes
from . import _common as c

ORDER = 10
# The three sweeps of the ping-pong study (Zahn 2021), and all of them without overlap.
PRESETS = {
    "bytes": "1:1K:1",          # every byte up to 1 KiB
    "fine": "16:20K:16",        # every 16 B up to 20 KiB
    "pow2": "1K:1G",            # powers of two from 1 KiB to 1 GiB
    "seed": "0:1K:1,1040:20K:16,32K:1G",
}
MODES = ("pingpong", "stream", "bidir", "put", "get")
# The state of the buffers (jostle-bench pingpong --help): osu is OSU's conventions, the default.
BUFFERS = ("osu", "distinct", "echo", "cold")

EXAMPLES = """examples:
  jostle pingpong --sizes 0:1K                       intra-node, powers of two up to 1 KiB
  jostle pingpong --sizes 1:1024:1 --min-reps 100    every byte up to 1 KiB
  jostle pingpong --preset seed --hosts n1,n2        the study's three sweeps, inter-node
  jostle pingpong --mpi mpich --name mpich-intra     the MPICH build, a chosen run name
  jostle pingpong --dry-run --sizes 0:4M             print the command line, launch nothing
  jostle pingpong --buffers osu,echo,distinct,cold --sizes 1:4M
                                                     one run per state of the buffers, and the
                                                     figure of what the state costs

The run is written to OUTPUT-DIR/CAMPAIGN/NAME.jsonl (NAME.jsonl.partial while it
runs; NAME.launch.json records the launcher line). A NAME that is already
complete is not run again. With several --buffers states there is one run per
state, NAME-STATE (NAME without a time stamp by default, so that the same command
resumes the campaign)."""


def comm_core_type(text):
    if text == "auto":
        return text
    items = text.split(",")
    if not all(i.isdigit() for i in items):
        raise argparse.ArgumentTypeError(
            f"'{text}' is not allowed; expected 'auto' or core numbers N[,N…] (one per rank)")
    return text


def comm_mem_type(text):
    if text in ("auto", "interleave") or all(i.isdigit() for i in text.split(",")):
        return text
    raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected 'auto', 'interleave' "
                                     "or NUMA node numbers N[,N…] (one per rank)")


def buffers_type(text) -> list:
    """A comma-separated list of buffer states, each once."""
    states = [x.strip() for x in text.split(",")]
    for x in states:
        if x not in BUFFERS:
            raise argparse.ArgumentTypeError(f"'{x}' is not a state of the buffers; allowed: "
                                             f"{', '.join(BUFFERS)}")
    if len(set(states)) < len(states):
        raise argparse.ArgumentTypeError(f"'{text}' names a state twice")
    return states


def precision_type(text):
    v = c.positive_float(text)
    if v >= 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected a fraction in (0, 1), e.g. 0.01")
    return v


def register(sub):
    p = sub.add_parser("pingpong", help="round-trip time and bandwidth between two ranks",
                       description="Run jostle-bench pingpong under an MPI launcher and record it.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("sweep")
    g.add_argument("--sizes", type=c.spec_type, metavar="SPEC",
                   help="message sizes: N | LO:HI (powers of two) | LO:HI:STEP, comma-separated, "
                        "K/M/G binary suffixes (default: 0:4M); with --preset, the largest "
                        "of them caps the preset's sweep")
    g.add_argument("--preset", choices=sorted(PRESETS),
                    help="a sweep of the ping-pong study: " + ", ".join(
                        f"{k}={v}" for k, v in PRESETS.items()))
    g.add_argument("--mode", choices=MODES, default="pingpong",
                   help="pingpong (blocking round trips), stream (one-way window), bidir, put "
                        "or get (one-sided window into / from rank 1, then a flush)")
    g.add_argument("--window", type=c.positive_int, metavar="N", help="messages in flight (stream, bidir, put, get; default 64, reduced where "
                        "window × size exceeds 256 MiB)")
    g.add_argument("--check", action="store_true", help="verify the received data")
    g.add_argument("--statistic", choices=("median", "mean"),
                   help="what the printed table (--verbose) shows of each point's samples: "
                        "median (default: robust to a busy node's outliers) or mean (OSU's: the "
                        "metric of the mean time per iteration); the record keeps both")
    g.add_argument("--order", type=order_type, metavar="ORDER",
                   help="order of the sizes: increasing (default, OSU's), decreasing, shuffled "
                        "or shuffled:SEED (a drift of the machine then spreads over every size "
                        "instead of looking like a trend with size; the seed is recorded)")
    g.add_argument("--percentiles", type=percentiles_type, metavar="LIST",
                   help="percentiles to record and print beside the median, e.g. 50,90,99,99.9")
    g.add_argument("--keep-samples", action="store_true",
                   help="keep every sample of every point beside the run file (RUN.jsonl.samples)")
    g.add_argument("--buffers", type=buffers_type, metavar="STATE[,STATE…]",
                   help="state of the buffers: osu (OSU's conventions, the default), distinct "
                        "(a slot per message in flight), echo (send back what arrived: dirty "
                        "lines; --mode pingpong only), cold (never in cache); several: one run "
                        "each and a figure of what the state costs")
    c.add_flow_options(g, "the aggregate bandwidth, message rate and each pair", "one run each")
    g.add_argument("--ranks", type=c.ranks_type, default=2, metavar="N", help="ranks (default 2; ≥ 2)")
    g.add_argument("--hosts", type=c.hosts_type, metavar="A,B",
                   help="hosts, one rank each in turn (default: this host only, intra-node)")
    g.add_argument("--comm-core", type=comm_core_type, metavar="N[,N…]|auto",
                   help="core of each rank's communicating thread")
    g.add_argument("--comm-mem", type=comm_mem_type, metavar="N[,N…]|auto|interleave",
                   help="NUMA node of the buffers")
    g.add_argument("--topology", metavar="FILE.xml", help="hwloc XML topology instead of this machine")
    h = p.add_argument_group("repetitions")
    h.add_argument("--min-reps", type=c.positive_int, metavar="N", help="at least N round trips per size (default 100)")
    h.add_argument("--max-reps", type=c.positive_int, metavar="N", help="at most N round trips per size (default 1000000)")
    h.add_argument("--precision", type=precision_type, metavar="F",
                   help="stop when the 95%% CI of the median is within F of it (default 0.01)")
    h.add_argument("--max-time", type=c.positive_float, metavar="S", help="seconds per size after --min-reps; the interval may not be reached "
                        "(default 2)")
    h.add_argument("--warmup", type=c.nonneg_int, metavar="N", help="untimed round trips before each size (default 10)")
    c.add_launch_options(p)
    c.add_output_options(p, campaign_default="adhoc")
    c.add_runs_option(h)
    p.add_argument("--name", type=c.name_type,
                   help="run name (default: pingpong-<intra|inter>-<mode>-<hash of the options>, "
                        "so the same command resumes)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the launcher command line and the time it may take; launch nothing")
    p.set_defaults(func=main)


def order_type(text):
    """--order, checked here as jostle-bench checks it (a bad value never reaches a launch)."""
    if re.fullmatch(r"increasing|decreasing|shuffled(:\d+)?", text):
        return text
    raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected increasing, "
                                     "decreasing, shuffled or shuffled:SEED")


def percentiles_type(text):
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        values = []
    if not values or not all(0 < v < 100 for v in values) or len(values) > 16:
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected up to 16 "
                                         "comma-separated percents between 0 and 100, "
                                         "e.g. 50,90,99,99.9")
    return text


def bench_args(args, spec, buffers=None, pairs=None, threads=None) -> list:
    """The jostle-bench pingpong options from ours (only those the user gave)."""
    out = ["--sizes", spec, "--mode", args.mode] + (["--buffers", buffers] if buffers else [])
    out += (["--pairs", str(pairs)] if pairs else []) + (
        ["--comm-threads", str(threads)] if threads else [])
    for opt in ("window", "comm_core", "comm_mem", "topology", "min_reps", "max_reps",
                "precision", "max_time", "warmup", "statistic", "order", "percentiles"):
        v = getattr(args, opt)
        if v is not None:
            out += ["--" + opt.replace("_", "-"), str(v)]
    out += ["--check"] if args.check else []
    out += ["--keep-samples"] if args.keep_samples else []
    return out


def flow_grid(args) -> list:
    """(pairs, threads) of each run when --pairs or --comm-threads is given (None: not given),
    checked here so that no run starts with a value jostle-bench would refuse."""
    if not args.pairs and not args.comm_threads:
        return []
    if args.mode in ("put", "get"):
        flag = "--pairs" if args.pairs else "--comm-threads"
        raise UsageError(f"{flag} is not allowed with --mode {args.mode}: the one-sided modes run "
                         "between ranks 0 and 1 only; allowed: pingpong, stream, bidir")
    grid = [(p, t) for p in (args.pairs or [None]) for t in (args.comm_threads or [None])]
    for p, t in grid:
        if (p or 1) * (t or 1) > 64:
            raise UsageError(f"--pairs {p} with --comm-threads {t} is not allowed: "
                             f"{(p or 1) * (t or 1)} flows, at most 64")
    return grid


def main(args):
    spec = args.sizes or "0:4M"
    if args.preset:
        spec = PRESETS[args.preset]
        if args.sizes:
            spec = cap_sizes(spec, max(parse_sizes(args.sizes)))
    sizes = parse_sizes(spec)
    hosts = args.hosts or []
    c.check_per_rank(args, args.ranks)
    if len(hosts) > args.ranks:
        raise UsageError(f"--hosts names {len(hosts)} hosts for --ranks {args.ranks}; "
                         "allowed: at most one host per rank")
    per_host = math.ceil(args.ranks / max(1, len(hosts)))
    c.check_memory(sizes, per_host, buffers=2 if args.check else 1,
                   option="--preset" if args.preset else "--sizes", spec=spec)
    states = args.buffers or [None]
    flows = flow_grid(args)
    if "echo" in states and args.mode != "pingpong":
        raise UsageError(f"--buffers echo is not allowed with --mode {args.mode}: only the "
                         "ping-pong's answer sends back what arrived; allowed: osu, distinct, cold")
    where = "inter" if len(set(hosts)) > 1 else "intra"
    several = len(states) > 1
    # the same command resumes its runs (a hash of what is measured, no clock in the name)
    base = args.name or c.default_name(f"pingpong-{where}-{args.mode}", bench_args(args, spec),
                                       args.ranks, hosts)
    sweep = launch.estimate_sweep(sizes, args.min_reps or 100, args.max_time, args.warmup or 10)
    timeout = args.timeout or launch.estimate_timeout(
        sizes, args.min_reps or 100, args.max_time, args.warmup or 10)
    runs = [RunSpec(f"{base}-{st}" if several else base, "pingpong", bench_args(args, spec, st),
                    args.ranks, hosts, timeout, estimate=sweep) for st in states] if not flows else [
        RunSpec(f"{base}{'-' + st if several else ''}-p{p or 1}-t{t or 0}", "pingpong",
                bench_args(args, spec, st, p, t), max(args.ranks, 2 * (p or 1)), hosts, timeout,
                estimate=sweep)
        for st in states for p, t in flows]
    runs = repeated(runs, args.runs)
    camp = Campaign(f"{args.output_dir}/{args.campaign}", runs)
    config = c.launch_config(args)
    if args.dry_run:
        return camp.dry_run(config, args.quiet)
    camp.run(config, Progress(), quiet=args.quiet)
    for run in runs:
        print(f"jostle: results in {camp.output(run)}", file=sys.stderr)
    if several:
        for p in figures.write(pingpong_figures.build([load_run(camp.output(r)) for r in runs]),
                               camp.dir / "figures"):
            print(p)
    return 0
