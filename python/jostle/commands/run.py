"""`jostle run`: the main job, as a list of steps.

Its own steps describe the machine, run a quick intra-node ping-pong and write the report; a
study adds its steps by declaring RUN_STEPS in its module (see jostle.commands), placed by the
step's order. Each step is a function of the shared Context, so steps never know each other.
"""

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from ..run import bench_query, estimate
from .. import report
from ..analysis import headline
from ..run.campaign import Campaign, LaunchConfig, RunSpec, repeated
from ..errors import UsageError
from ..run.progress import Progress
from ..records.results import find_run_files
from ..sizes import parse_sizes
from . import _common
from . import _record
from ..studies import pingpong as pingpong_study
from . import run_steps
from ._launches import report_launches
from .machine import summary

ORDER = 1
STUDY = True
# The ping-pong study's three ranges without overlap (every byte to 1 KiB, every 16 B to
# 20 KiB, powers of two above), capped at 64 MiB and 0.2 s a point, in LAUNCHES launches (the
# launch as the unit) that share the point's time and samples (studies/pingpong.launch_budget).
QUICK_SIZES = "0:1K:1,1040:20K:16,32K:64M"
QUICK_TIME = 0.2
LAUNCHES = pingpong_study.LAUNCHES
QUICK_REPS = pingpong_study.launch_options(QUICK_TIME, LAUNCHES)


@dataclass
class Context:
    args: argparse.Namespace
    dir: Path                       # the campaign directory
    progress: Progress
    _config: Optional[LaunchConfig] = None
    notes: list = field(default_factory=list)   # printed at the end

    @property
    def config(self) -> LaunchConfig:  # resolved once, on first use
        if self._config is None:
            self._config = _common.launch_config(self.args)
        return self._config


@dataclass
class Step:
    name: str
    help: str
    func: Callable
    runs: Optional[Callable] = None   # ctx -> (Campaign, its LaunchConfig or a function of
                                      # the RunSpec) of the runs the step launches, or None
    order: int = 50                   # its place in the job: machine 0, ping-pong 20, report 100


def step_machine(ctx):
    m = bench_query.bench_machine(ctx.config.bench)
    ctx.dir.mkdir(parents=True, exist_ok=True)
    (ctx.dir / "machine.json").write_text(json.dumps(m, indent=1) + "\n")
    print("jostle: machine\n" + summary(m), file=sys.stderr)


def pingpong_runs(ctx):
    run = RunSpec("pingpong-intra", "pingpong", ["--sizes", QUICK_SIZES, *QUICK_REPS], ranks=2,
                  timeout=ctx.args.timeout or estimate.estimate_timeout(
                      parse_sizes(QUICK_SIZES, ctx.config.bench), max_time=float(QUICK_REPS[1])))
    return Campaign(ctx.dir, repeated([run], LAUNCHES)), ctx.config


def step_pingpong(ctx):
    camp, config = pingpong_runs(ctx)
    camp.run(config, ctx.progress, quiet=ctx.args.quiet)
    for out in report_launches(camp, camp.runs, LAUNCHES, rows=False):
        ctx.progress.note(f"every point of the sweep, over its {LAUNCHES} launches, is in {out}"
                          + ("" if not ctx.args.quiet else "; --verbose prints each launch's "
                             "table"))


def step_report(ctx):
    if not find_run_files(ctx.dir):
        ctx.notes.append(f"no run in {ctx.dir}: no report written")
        return
    got = []
    out = report.write([ctx.dir], ctx.dir / "report.html", title=f"jostle run: {ctx.dir.name}",
                       figures_dir=ctx.dir / "figures", on_summary=got.append)
    summary = got[0] if got else None
    if summary:   # the report's summary table, in the closing lines too
        ctx.notes += ["what this machine shows:"] + [
            "  " + line for line in headline.summary_lines(summary["headline"])]
        fit = summary.get("model_fit")
        if fit and not fit["fits"]:
            ctx.notes.append("the contention model does not fit this machine (leave-one-out "
                             "mean error " + (f"{fit['mean_abs_error']:.0%}"
                                              if fit["mean_abs_error"] is not None else "unknown")
                             + f", above {fit['limit']:.0%}): " + "; ".join(fit["causes"]))
    ctx.notes.append(f"figures: {(ctx.dir / 'figures').resolve()}")
    ctx.notes.append(f"report: {out.resolve()}")   # last: the line a user copies


OWN_STEPS = [
    Step("machine", "print and save the machine as jostle-bench sees it", step_machine, order=0),
    Step("pingpong", f"intra-node ping-pong, sizes {QUICK_SIZES}", step_pingpong, pingpong_runs,
         order=20),
    Step("report", "write report.html and the figures of the campaign", step_report, order=100),
]


def steps() -> list:
    """Every step of the job, ours and the studies', in their order."""
    return sorted(OWN_STEPS + run_steps(), key=lambda s: s.order)


def register(sub):
    p = sub.add_parser(
        "run", help="the main job: machine summary, quick campaign, HTML report",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run the default campaign on this machine and write its report. "
                    "Completed runs of the campaign are kept: running it again resumes.",
        epilog="steps:\n" + "\n".join(f"  {s.name:<10} {s.help}" for s in steps())
        + "\n\nexamples:\n  jostle run\n  jostle run --campaign lab1 --steps pingpong,report\n"
          "  jostle run --mpi mpich --output-dir /scratch/results")
    p.add_argument("--steps", metavar="A,B",
                   help="run only these steps, in the order listed below (default: all)")
    p.add_argument("--dry-run", action="store_true",
                   help="print each step's runs (their command lines, how many, how long); "
                        "launch nothing")
    _common.add_launch_options(p)
    _common.add_output_options(p, campaign_default="run-<date>")
    p.set_defaults(func=main)


def main(args):
    known = [s.name for s in steps()]
    wanted = known
    if args.steps is not None:
        wanted = [s.strip() for s in args.steps.split(",")]
        bad = [s for s in wanted if s not in known]
        if bad:
            raise UsageError(f"--steps: '{bad[0]}' is not a step; allowed: {', '.join(known)}")
    if args.campaign == "run-<date>":
        args.campaign = "run-" + time.strftime("%Y-%m-%d", time.gmtime())
    camp_dir = Path(args.output_dir) / args.campaign
    # an unwritable directory is a usage error, found first (a dry run creates nothing)
    if args.dry_run:
        Campaign(camp_dir, []).check_writable()
    else:
        Campaign(camp_dir, []).prepare()
    ctx = Context(args, camp_dir, Progress())
    t0 = time.monotonic()
    chosen = [s for s in steps() if s.name in wanted]
    # Every step's plan first: the progress line counts and estimates the whole job.
    plans = {s.name: s.runs(ctx) if s.runs else None for s in chosen}
    planned = sum(len(p[0].runs) for p in plans.values() if p)
    if args.dry_run:
        for step in chosen:
            print(f"jostle: step {step.name}: {step.help}", file=sys.stderr)
            if plans[step.name]:
                camp, config = plans[step.name]
                camp.dry_run(config, args.quiet)
        print(f"jostle: dry run: {len(chosen)} steps, {planned} runs in {camp_dir.resolve()}",
              file=sys.stderr)
        return 0
    ctx.progress.expect(planned)
    print(f"jostle: {len(chosen)} steps, {planned} runs, in {camp_dir.resolve()}", file=sys.stderr)
    for step in chosen:
        print(f"jostle: step {step.name}: {step.help}", file=sys.stderr)
        step.func(ctx)
    _record.then_campaign(args, 0)   # before the notes: the report's path stays the last line
    print(f"jostle: done in {time.monotonic() - t0:.0f} s; campaign {camp_dir.resolve()}",
          file=sys.stderr)
    for note in ctx.notes:
        print(f"jostle: {note}", file=sys.stderr)
    return 0
