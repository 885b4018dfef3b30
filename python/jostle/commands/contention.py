"""`jostle contention fig1|fig2|fig3|fig4|usecases`: the studies of Swartvagher (COMPAS 2021,
SIAM PP22, planned by studies/contention.py) as resumable campaigns, then their figure."""

import argparse
import sys
from fractions import Fraction

from ..records import benchmarks
from .. import figures
from ..run import bench_query
from ..run.campaign import Campaign
from ..figures import contention as contention_figures
from ..records.results import load_run
from ..studies import contention as study
from ..studies.contention import FIG4_AI, KERNELS, MIN_AI, USECASE_KERNELS
from . import _common
from ._launches import report_launches
from .run import Step

ORDER = 20
STUDY = True
STUDIES = study.STUDIES

EXAMPLES = """examples:
  jostle contention fig1 --quick                      a few minutes on a laptop
  jostle contention fig1 --hosts n1,n2                the paper's figure 1 on two nodes
  jostle contention fig2 --hosts n1,n2 --max-cores 35
  jostle contention fig3 --cores 35 --hosts n1,n2
  jostle contention fig4 --ai 1/12,1,6,16 --cores 35 --hosts n1,n2
  jostle contention usecases --cores 35 --hosts n1,n2 --dry-run

Runs are written to OUTPUT-DIR/CAMPAIGN/<study>-….jsonl (…-quick.jsonl with --quick) and
the figure to OUTPUT-DIR/CAMPAIGN/figures/. Completed runs are never run again."""


# ---------------------------------------------------------------- option types

def fraction(text) -> Fraction:
    try:
        return Fraction(text.strip()).limit_denominator(10 ** 6)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"'{text}' is not a number; expected e.g. 0.5 or 1/12") from None


def ai_type(text) -> Fraction:
    v = fraction(text)
    if v < MIN_AI:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not allowed: the arithmetic intensity of triad is at least 1/12 "
            "flop/byte (2 flops per 24 bytes)")
    return v


def ai_list_type(text) -> list:
    return [ai_type(x) for x in text.split(",")]


def kernel_list_type(text) -> list:
    ks = [k.strip() for k in text.split(",")]
    bad = [k for k in ks if k not in KERNELS]
    if bad:
        raise argparse.ArgumentTypeError(f"'{bad[0]}' is not a kernel; allowed: {', '.join(KERNELS)}")
    return ks


def _placement(allowed):
    def check(text):
        if text in allowed or text.isdigit():
            return text
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected "
                                         f"{'|'.join(allowed)} or a number")
    return check


# ---------------------------------------------------------------- the command

def register(sub):
    p = sub.add_parser(
        "contention", help="computation vs communication contention studies (figures 1-4, use cases)",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES,
        description="Plan and run a campaign of jostle-bench contention runs, then draw its "
                    "figure with the degradation of both sides (comm: latency_together/"
                    "latency_alone − 1, 1 − bw_together/bw_alone; compute: 1 − "
                    "computebw_together/computebw_alone).")
    studies = p.add_subparsers(dest="study", metavar="STUDY", required=True)
    for name, text in STUDIES.items():
        s = studies.add_parser(name, help=text, description=text, epilog=EXAMPLES,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
        add_options(s, name)
        s.set_defaults(func=main)


def add_options(p, figure):
    g = p.add_argument_group("study")
    g.add_argument("--quick", action="store_true",
                   help="short phases (0.2 s, 20 repetitions, arrays of twice the last-level "
                        "cache where memory allows, else 8 MiB): a first look, "
                        "and an estimate of the default mode's cost")
    if figure in ("fig1", "fig2"):
        g.add_argument("--max-cores", type=_common.nonneg_int, metavar="N",
                       help="sweep 0..N compute cores per rank (default: every free core of "
                            "the rank's share of the host; every core where none is free)")
    else:
        g.add_argument("--cores", type=_common.positive_int, metavar="N",
                       help="compute cores per rank (default: every free core of its share)")
    if figure in ("fig1", "fig2", "fig3"):
        _common.bench_option(g, "contention", "kernel", default=benchmarks.default("contention", "kernel"))
        _common.bench_option(g, "contention", "stores")
        g.add_argument("--ai", type=ai_type, metavar="F",
                       help="triad's arithmetic intensity, flop/byte (≥ 1/12)")
    if figure == "fig3":
        g.add_argument("--sizes", type=_common.spec_type, metavar="SPEC",
                       help="message sizes (default: powers of 4, 4 B..64 MiB)")
    if figure == "fig4":
        g.add_argument("--ai", dest="ai_list", type=ai_list_type, metavar="F,F…",
                       help=f"intensities of triad, flop/byte, each ≥ 1/12 (default {FIG4_AI})")
    if figure == "usecases":
        g.add_argument("--kernels", type=kernel_list_type, metavar="K,K…",
                       help=f"kernels compared (default {USECASE_KERNELS})")
    g.add_argument("--ranks", type=_common.ranks_type, default=2, metavar="N", help="ranks (default 2)")
    g.add_argument("--hosts", type=_common.hosts_type, metavar="A,B",
                   help="hosts, one rank each in turn (default: this host only)")
    if figure != "fig2":   # fig2 is the four placements
        for flag, words, what in (
                ("--comm-core", ("near", "far", "auto"), "core of the communicating thread"),
                ("--comm-mem", ("near", "far", "interleave", "auto"), "NUMA node of its buffers"),
                ("--compute-mem", ("local", "near", "far", "interleave"),
                 "NUMA node of the kernel's arrays (local)")):
            g.add_argument(flag, type=_placement(words), metavar="|".join(words) + "|N", help=what)
    _common.bench_option(g, "contention", "compute-on")
    _common.add_flow_options(g, "each rank of the pairs with its compute threads",
                       "the study once per count, and the heat map communicating ranks × "
                       "computing cores")
    _common.bench_option(g, "contention", "nic")
    h = p.add_argument_group("phases and repetitions")
    for name, kind in (("phase-time", _common.positive_float), ("repeat", _common.positive_int),
                       ("array-bytes", _common.bytes_type), ("min-reps", _common.positive_int),
                       ("max-time", _common.positive_float), ("precision", _common.precision_type)):
        _common.bench_option(h, "contention", name, type=kind)
    _common.add_launch_options(p)
    _common.add_output_options(p, campaign_default="contention")
    _common.add_runs_option(h, default=study.LAUNCHES, help=_common.LAUNCHES_HELP)
    p.add_argument("--dry-run", action="store_true", help="print the command lines and exit")


def draw(camp, outdir) -> list:
    return figures.write(contention_figures.build([load_run(camp.output(s)) for s in camp.runs]),
                         outdir)


def main(args):
    _common.check_hosts(args)
    config = _common.launch_config(args)
    machine = bench_query.bench_machine(config.bench)
    settings = _common.settings(study.Settings, args)
    runs = study.plan(args.study, settings, machine, config.bench)

    def after(camp, config, progress):
        report_launches(camp, runs, args.runs)
        for p in draw(camp, camp.dir / "figures"):
            print(p)
        if settings.quick:
            done = [load_run(camp.output(s)) for s in camp.runs]
            note = study.estimate_note(args.study, settings, done, machine, config.bench)
            print(f"jostle: {note}", file=sys.stderr)
        return 0
    return _common.run_campaign(args, runs, after, config)


def _step_study(ctx):
    """`jostle run`'s quick fig1: its options and the machine, or None without the benchmark."""
    if "contention" not in bench_query.bench_version(ctx.config.bench).get("benchmarks", []):
        return None
    p = argparse.ArgumentParser()
    add_options(p, "fig1")
    # one launch a run: three would triple the step's start-ups (MPI, the topology, the first
    # touch of the arrays; most of a quick run's time here), and `jostle run` keeps its time
    args = argparse.Namespace(**{**vars(p.parse_args(["--quick", "--runs", "1"])),
                                 **vars(ctx.args)})
    return _common.settings(study.Settings, args), bench_query.bench_machine(ctx.config.bench)


def step_contention(ctx):
    """`jostle run`: a quick fig1 (triad, 4 B and 64 MiB) in the run's campaign."""
    quick = _step_study(ctx)
    if quick is None:
        ctx.notes.append(f"{ctx.config.bench} has no contention benchmark: step skipped")
        return
    settings, machine = quick
    camp = Campaign(ctx.dir, study.plan("fig1", settings, machine, ctx.config.bench))
    camp.run(ctx.config, ctx.progress, quiet=ctx.args.quiet)
    runs = [load_run(camp.output(s)) for s in camp.runs]
    ctx.notes.append(study.estimate_note("fig1", settings, runs, machine, ctx.config.bench))


def step_runs(ctx):
    quick = _step_study(ctx)
    return (Campaign(ctx.dir, study.plan("fig1", *quick, ctx.config.bench)), ctx.config
            ) if quick else None


RUN_STEPS = [Step("contention", "quick core-count sweep: fig1 --quick (triad, 4 B and 64 MiB)",
                  step_contention, step_runs, order=30)]
