"""`jostle submit STUDY …`: a study's campaign as a SLURM batch job (see jostle.run.batch)."""

import argparse
import contextlib
import io
import re
import sys
from pathlib import Path

from ..run import batch, slurm
from ..errors import UsageError
from . import _common
from . import studies

ORDER = 90

EXAMPLES = """examples:
  jostle submit contention fig1 --quick --nodes 1 --time 5 --dry-run   print the script
  jostle submit pingpong --preset seed --nodes 2 --time 1:00:00 --partition short
  jostle submit cholesky --n 4096 --nodes 1 --time 30 -- --nodes 2:64  (a study option
                                               named like one of submit's goes after --)
  jostle status results/contention           what is complete, partial, planned; the jobs

The script (OUTPUT-DIR/CAMPAIGN/jostle-job.sbatch) reruns the study's command in an
allocation of its own (--exclusive); the campaign skips what is complete, so a job that was
cancelled, requeued or timed out is continued by the same `jostle submit` again. With more
than one node and no --hosts, the study gets the allocation's nodes as --hosts."""


# sbatch --time: minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S
_TIME = re.compile(r"^(?:(\d+)-(\d+)(?::(\d+))?(?::(\d+))?|(\d+)(?::(\d+))?(?::(\d+))?)$", re.ASCII)


def time_type(text):
    """sbatch's --time, each field in its range (hours < 24 after a day, minutes and seconds
    < 60 after a larger unit): an argparse type (exit 2, one line)."""
    m = _TIME.fullmatch(text)
    ok = bool(m)
    if m and m.group(1) is not None:                     # D-H[:M[:S]]
        ok = int(m.group(2)) < 24 and all(int(f) < 60 for f in m.group(3, 4) if f)
    elif m:                                              # M | M:S | H:M:S
        fields = [int(f) for f in m.group(5, 6, 7) if f]
        ok = all(f < 60 for f in fields[1:])
    if not ok:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not allowed; expected minutes or sbatch's formats M:S, H:M:S, D-H, "
            "D-H:M, D-H:M:S with hours < 24 and minutes, seconds < 60 (e.g. 30, 2:00:00, 1-0)")
    return text


def name_type(what, allow_list=False):
    """An argparse type for a SLURM name (partition, account): batch.slurm_name's rule."""
    def check(text):
        try:
            return batch.slurm_name(text, what, allow_list)
        except UsageError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    check.__name__ = what
    return check


def _own_options(p):
    p.add_argument("--nodes", type=_common.positive_int, metavar="N", help="nodes (default 1)")
    p.add_argument("--time", type=time_type, metavar="T",
                   help="time limit, as sbatch takes it: minutes, H:M:S, D-H… (required)")
    p.add_argument("--partition", metavar="P", type=name_type("partition", True),
                   help="SLURM partition, or a comma-separated list (default: the site's)")
    p.add_argument("--account", metavar="A", type=name_type("account"),
                   help="account to charge (default: yours)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the script; write and submit nothing (works without SLURM)")


def register(sub):
    p = sub.add_parser("submit", help="run a study's campaign as a SLURM batch job",
                       description="Write an sbatch script that runs STUDY's campaign "
                                   "(resumable) into its directory, and submit it.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    _own_options(p)
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="STUDY [study options]",
                   help="one of " + ", ".join(studies()) + ", with its options")
    p.set_defaults(func=main)


class _OwnParser(argparse.ArgumentParser):
    """submit's options found among the study's: an error is a usage error (exit 2, one line)."""

    def error(self, message):
        raise UsageError(f"jostle submit: {message}")


def split(args):
    """(our options, the study's argv): ours may come anywhere before a `--`."""
    argv = list(args.argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    own = _OwnParser(prog="jostle submit", allow_abbrev=False)
    _own_options(own)
    found, rest = own.parse_known_args(argv[:cut])
    for k, v in vars(found).items():
        if v not in (None, False):
            setattr(args, k, v)
    return args, rest + argv[cut + 1:]


def main(args):
    args, study_argv = split(args)
    if not study_argv or study_argv[0] not in studies():
        got = f"'{study_argv[0]}'" if study_argv else "nothing"
        raise UsageError(f"jostle submit: STUDY {got} is not allowed; expected one of "
                         + ", ".join(studies()))
    if not args.time:
        raise UsageError("jostle submit: --time T is required (the job's time limit, e.g. 30 "
                         "or 2:00:00)")
    if "--dry-run" in study_argv:
        raise UsageError("jostle submit: --dry-run is submit's own option: give it once")
    study = args.parser().parse_args(study_argv)   # the study's own parser judges its options
    if not args.dry_run:
        slurm.sbatch_path()   # no SLURM here: say so before anything else
    # A script only for a command that would run: the study plans itself as its own dry run
    # does (options, plan, the bench's checks), its printing discarded; its error is ours.
    study.dry_run = True
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        study.func(study)
    directory = Path(study.output_dir) / study.campaign
    nodes = args.nodes or 1
    hosts = nodes > 1 and hasattr(study, "hosts") and not study.hosts
    text = batch.script(study_argv, nodes=nodes, time_limit=args.time,
                        partition=args.partition, account=args.account,
                        directory=directory, hosts_from_allocation=hosts)
    if args.dry_run:
        print(text, end="")
        return 0
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / batch.SCRIPT
        path.write_text(text)
    except OSError as e:
        raise UsageError(f"output directory '{directory}' is not writable: {e.strerror}") from None
    job = batch.submit(path)
    print(f"jostle: submitted job {job}: {path} (follow it with: jostle status {directory})",
          file=sys.stderr)
    print(job)
    return 0
