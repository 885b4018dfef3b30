"""`jostle plot`: the figures of one or more runs, as PNG and SVG files."""

import argparse
import re
import sys
import warnings
from pathlib import Path

from .. import figures
from . import _common
from ..errors import JostleError, UsageError
from ..records.results import IncompleteRunError, IncompleteRunWarning, load

ORDER = 30


def register(sub):
    p = sub.add_parser(
        "plot", help="draw the figures of runs (PNG and SVG)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Draw the figures of the runs in FILE_OR_DIR (directories are searched "
                    "recursively). Runs of the same benchmark are overlaid.",
        epilog="examples:\n  jostle plot results/adhoc\n"
               "  jostle plot results/a/intra.jsonl results/b/inter.jsonl -o figs\n"
               "  jostle plot --allow-incomplete results/adhoc/run.jsonl.partial")
    p.add_argument("paths", nargs="+", metavar="FILE_OR_DIR")
    p.add_argument("-o", "--output", type=_common.out_dir_type, metavar="OUTDIR",
                   help="where to write the figures (default: DIR/figures for a directory, "
                        "else figures/ beside the first file)")
    p.add_argument("--format", default="png,svg", metavar="png,svg",
                   help="comma-separated formats (png, svg, pdf; default png,svg)")
    p.add_argument("--statistic", metavar="pNN",
                   help="a percentile to draw dashed beside the median where a figure can "
                        "(the ping-pong's): p99 is in every record; others (p90, p99.9) where "
                        "jostle-bench ran with --percentiles or -z")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="also draw runs that did not finish (they are labelled INCOMPLETE)")
    p.set_defaults(func=main)


def load_drawable(paths, allow_incomplete) -> list:
    """The runs of PATHS to draw: a run file named on the command line must be complete
    (unless ALLOW_INCOMPLETE), but an incomplete one found in a directory, beside complete
    runs, is left out with a note rather than refusing them all."""
    if allow_incomplete:
        return load(paths, allow_incomplete=True)   # each incomplete one with its warning
    load([p for p in paths if not Path(p).is_dir()])   # a named one is refused, by name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteRunWarning)
        runs = load(paths, allow_incomplete=True)
    skipped = [r for r in runs if not r.complete]
    for r in skipped:
        print(f"jostle: note: {r.path} left out: incomplete ({r.problem}); "
              "--allow-incomplete draws it too", file=sys.stderr)
    if len(skipped) == len(runs):
        raise IncompleteRunError(skipped[0].path, len(skipped[0].points), skipped[0].problem)
    return [r for r in runs if r.complete]


def main(args):
    formats = [f.strip() for f in args.format.split(",")]
    bad = [f for f in formats if f not in ("png", "svg", "pdf")]
    if bad:
        raise UsageError(f"--format '{args.format}': '{bad[0]}' is not allowed; expected png, svg or pdf")
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        raise UsageError(f"'{missing[0]}' does not exist; expected a .jsonl file or a directory of them")
    first = Path(args.paths[0])
    outdir = Path(args.output) if args.output else (
        first / "figures" if first.is_dir() else first.parent / "figures")
    runs = load_drawable(args.paths, args.allow_incomplete)
    stat = args.statistic
    if stat is not None:
        if not re.fullmatch(r"p\d+(\.\d+)?", stat):
            raise UsageError(f"--statistic '{stat}' is not allowed; expected a percentile "
                             "such as p99 or p99.9")
        if not any(stat in r.points for r in runs):
            raise UsageError(f"--statistic '{stat}': no run holds it; p99 is in every record, "
                             "other percentiles where jostle-bench ran with --percentiles")
    figs = figures.build(runs, statistic=stat)
    if not figs:
        raise JostleError(f"no figure to draw for {len(runs)} run(s) of "
                          f"{', '.join(sorted({r.benchmark for r in runs}))}")
    try:
        paths = figures.write(figs, outdir, formats)
    except OSError as e:
        raise UsageError(f"cannot write figures to '{outdir}': {e.strerror}") from None
    for p in paths:
        print(p)
    return 0
