"""`jostle pingpong`: one ping-pong run, launched and recorded in a campaign."""

import argparse

from ..records import benchmarks
from .. import figures
from ..figures import pingpong as pingpong_figures
from ..records.results import load_run
from ..studies import pingpong as study
from . import _common
from ._launches import report_launches

ORDER = 10
STUDY = True
LAUNCHES, PRESETS = study.LAUNCHES, study.PRESETS

EXAMPLES = """examples:
  jostle pingpong --sizes 0:1K                       intra-node, powers of two up to 1 KiB
  jostle pingpong --sizes 1:1024:1 --min-reps 100    every byte up to 1 KiB
  jostle pingpong --preset seed --hosts n1,n2        the study's three sweeps, inter-node
  jostle pingpong --mpi mpich --name mpich-intra     the MPICH build, a chosen run name
  jostle pingpong --dry-run --sizes 0:4M             print the command line, launch nothing
  jostle pingpong --buffers osu,echo,distinct,cold --sizes 1:4M
                                                     one run per state of the buffers, and the
                                                     figure of what the state costs
  jostle pingpong --mode stream --pages system,base,huge --sizes 4K:4M
                                                     one run per kind of pages, and the same
                                                     figure: what huge pages gain

The run is written to OUTPUT-DIR/CAMPAIGN/NAME.jsonl (NAME.jsonl.partial while it
runs; NAME.launch.json records the launcher line). A NAME that is already
complete is not run again. With several --buffers states or --pages kinds there
is one run per state and kind, NAME-STATE-KIND (NAME without a time stamp by
default, so that the same command resumes the campaign)."""


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


def choices_type(option, what):
    """A comma-separated list of jostle-bench pingpong's choices of OPTION, each once."""
    def parse(text) -> list:
        states = [x.strip() for x in text.split(",")]
        allowed = benchmarks.choices("pingpong", option)
        for x in states:
            if x not in allowed:
                raise argparse.ArgumentTypeError(f"'{x}' is not {what}; allowed: "
                                                 f"{', '.join(allowed)}")
        if len(set(states)) < len(states):
            raise argparse.ArgumentTypeError(f"'{text}' names one twice")
        return states
    return parse


buffers_type = choices_type("buffers", "a state of the buffers")
pages_type = choices_type("pages", "a kind of pages")


# jostle-bench's stopping rule (its defaults and help from its descriptor), with our checks.
REPETITIONS = dict(zip(study.REPETITIONS, (
    _common.positive_int, _common.positive_int, _common.precision_type, str, _common.positive_float, _common.nonneg_int, str,
    _common.positive_int)))


def register(sub):
    p = sub.add_parser("pingpong", help="round-trip time and bandwidth between two ranks",
                       description="Run jostle-bench pingpong under an MPI launcher and record it.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("sweep")
    g.add_argument("--sizes", type=_common.spec_type, metavar="SPEC",
                   help="message sizes: N | LO:HI (powers of two) | LO:HI:STEP, comma-separated, "
                        f"K/M/G binary suffixes (default {benchmarks.default('pingpong', 'sizes')})"
                        "; with --preset, the largest "
                        "of them caps the preset's sweep")
    g.add_argument("--preset", choices=sorted(PRESETS),
                    help="a sweep of the ping-pong study: " + ", ".join(
                        f"{k}={v}" for k, v in PRESETS.items()))
    _common.bench_option(g, "pingpong", "mode")
    _common.bench_option(g, "pingpong", "window", type=_common.positive_int)
    _common.bench_option(g, "pingpong", "check")
    _common.bench_option(g, "pingpong", "statistic")
    _common.bench_option(g, "pingpong", "order",
                   help=benchmarks.option("pingpong", "order")["help"] + "; a drift of the "
                        "machine then spreads over every size instead of looking like a trend "
                        "with size")
    _common.bench_option(g, "pingpong", "percentiles")
    _common.bench_option(g, "pingpong", "keep-samples")
    _common.bench_option(g, "pingpong", "buffers", type=buffers_type, metavar="STATE[,STATE…]",
                   help=benchmarks.option("pingpong", "buffers")["help"] + "; several: one run "
                        "each and a figure of what the state costs")
    _common.bench_option(g, "pingpong", "pages", type=pages_type, metavar="KIND[,KIND…]",
                   help=benchmarks.option("pingpong", "pages")["help"] + "; several: one run "
                        "each and the figure of what they cost (with --buffers, one run per "
                        "state and kind)")
    _common.add_flow_options(g, "the aggregate bandwidth, message rate and each pair", "one run each")
    g.add_argument("--ranks", type=_common.ranks_type, default=2, metavar="N", help="ranks (default 2; ≥ 2)")
    g.add_argument("--hosts", type=_common.hosts_type, metavar="A,B",
                   help="hosts, one rank each in turn (default: this host only, intra-node)")
    _common.bench_option(g, "pingpong", "comm-core", type=comm_core_type)
    _common.bench_option(g, "pingpong", "comm-mem", type=comm_mem_type)
    _common.bench_option(g, "pingpong", "topology")
    h = p.add_argument_group("repetitions")
    for name, kind in REPETITIONS.items():
        _common.bench_option(h, "pingpong", name, type=kind)
    _common.add_launch_options(p)
    _common.add_output_options(p, campaign_default="adhoc")
    _common.add_runs_option(h, default=LAUNCHES, help=(
        f"launch each run K times (NAME-r1 … NAME-rK, default {LAUNCHES}; 1: one launch, said "
        "so), each point's --max-time, --min-reps and --max-reps (OSU's 1000 unless given) "
        f"divided among them (--max-time not given: {study.LAUNCH_TIME:g} s a launch at most) "
        "and its --precision widened by √K (the same samples in all), and "
        "report per point the median over the launches, the 95%% interval the next "
        "invocation's median falls in (the launch as the unit) and a launch's own interval "
        "beside it; "
        f"at most {_common.MAX_RUNS}"))
    p.add_argument("--name", type=_common.name_type,
                   help="run name (default: pingpong-<intra|inter>-<mode>-<hash of the options>, "
                        "so the same command resumes)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the launcher command line and the time it may take; launch nothing")
    p.set_defaults(func=main)


def main(args):
    _common.check_per_rank(args, args.ranks)
    _common.check_hosts(args)
    settings = _common.settings(study.Settings, args)
    runs = study.plan(settings, _common.bench_of(args))
    several = len(args.buffers or []) > 1 or len(args.pages or []) > 1

    def after(camp, config, progress):
        report_launches(camp, runs, args.runs)
        if several:   # several states or kinds of pages: what each one costs
            for p in figures.write(pingpong_figures.build([load_run(camp.output(r))
                                                           for r in runs]), camp.dir / "figures"):
                print(p)
        return 0
    return _common.run_campaign(args, runs, after)

