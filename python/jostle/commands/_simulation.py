"""The options every simulated command shares (--simulate and the platform), read into a
jostle.run.simgrid.Sweep."""

import argparse
from pathlib import Path

from ..errors import UsageError
from ..run.simgrid import Sweep
from . import _common


def noise_type(text):
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not (v >= 0 and v < 10):
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected a spread from 0 "
                                         "to 10 (the standard deviation of a log: 0.05 is 5%)")
    return v


def add_options(parser, speed_default: str, speed_help: str, poll_default: float = 1e-7,
                noise=False):
    """The options every simulated command shares (what plan_sweep reads); returns the group,
    for a command's own simulation options. NOISE: also --noise and --seed (nodes that
    differ, drawn by plan_sweep)."""
    s = parser.add_argument_group("simulation (SimGrid)")
    s.add_argument("--simulate", action="store_true",
                   help="run under smpirun on generated platforms")
    # Defaults are filled in by check_simulation: an option given without --simulate is
    # refused rather than silently ignored.
    none = argparse.SUPPRESS
    s.add_argument("--nodes", default=none, metavar="SPEC",
                   help="simulated node counts: LO:HI powers of two, or N,N,… (default 4:256)")
    s.add_argument("--bandwidth", default=none, metavar="BW",
                   help="per-node link bandwidth, e.g. 10Gbps or 1.25GBps (default 10Gbps)")
    s.add_argument("--latency", default=none, metavar="T", help="per-link latency (default 1us)")
    s.add_argument("--speed", default=none, metavar="F",
                   help=f"{speed_help} (default {speed_default})")
    s.add_argument("--poll-cost", type=_common.positive_float, default=none, metavar="S",
                   help=f"simulated seconds per MPI_Iprobe/MPI_Test (default {poll_default:g})")
    s.add_argument("--jobs", type=_common.positive_int, default=none, metavar="N",
                   help="simulated runs side by side (default 1): SimGrid runs on one core, and "
                        "a simulated time does not depend on the machine's load")
    if noise:
        s.add_argument("--noise", type=noise_type, default=none, metavar="SD",
                       help="nodes that differ: each node's link bandwidth and latency times "
                            "e^(SD·e), e a standard normal drawn once per node from --seed "
                            "(0.05: about 5%%; default 0, identical nodes)")
        s.add_argument("--seed", type=_common.nonneg_int, default=none, metavar="S",
                       help="seed of --noise's draws (default 1)")
    parser.set_defaults(sim_defaults={**SIM_DEFAULTS, "speed": speed_default,
                                      "poll_cost": poll_default,
                                      **({"noise": 0.0, "seed": 1} if noise else {})})
    return s


SIM_DEFAULTS = {"nodes": "4:256", "bandwidth": "10Gbps", "latency": "1us", "poll_cost": 1e-7,
                "jobs": 1}


def check_simulation(args):
    """With --simulate, fill in the simulation options not given; without it, refuse them."""
    if args.simulate and getattr(args, "runs", 1) > 1:
        raise UsageError(f"--runs {args.runs} is not allowed with --simulate: a simulated run is "
                         "deterministic, so a second launch draws nothing new; leave --runs out")
    for key, default in args.sim_defaults.items():
        if args.simulate:
            setattr(args, key, getattr(args, key, default))
        elif hasattr(args, key):
            flag = "--" + key.replace("_", "-")
            raise UsageError(f"{flag} is only used with --simulate; add --simulate, or leave "
                             f"{flag} out for a run on real ranks")


def sweep(args) -> Sweep:
    """The simulated campaign ARGS asks for (after check_simulation)."""
    return Sweep(Path(args.output_dir) / args.campaign, args.bandwidth, args.latency, args.speed,
                 args.poll_cost, cores_per_node=getattr(args, "cores_per_node", 1),
                 bench=args.bench, timeout=args.timeout, jobs=args.jobs, dry_run=args.dry_run,
                 quiet=args.quiet, noise=getattr(args, "noise", 0.0),
                 seed=getattr(args, "seed", 1))
