"""`jostle report`: one self-contained HTML page for a campaign."""

import argparse
import json
from pathlib import Path

from .. import report
from . import _common
from ..errors import UsageError

ORDER = 40


def register(sub):
    p = sub.add_parser(
        "report", help="write one self-contained HTML report",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write an HTML page (no external assets) with the machine, the warnings, "
                    "the figures and the tables of medians, quartiles and confidence intervals "
                    "of every run under DIR. Incomplete runs are included and flagged.",
        epilog="examples:\n  jostle report results/adhoc\n  jostle report results/run-2026-11-22 -o /tmp/r.html")
    p.add_argument("paths", nargs="+", metavar="DIR")
    p.add_argument("-o", "--output", type=_common.out_file_type, metavar="FILE.html", help="default: DIR/report.html")
    p.add_argument("--title", help="page title")
    p.add_argument("--compare", metavar="A",
                   help="add a section comparing these runs with the reference A (a campaign "
                        "folder or run file), as `jostle compare A DIR` with its defaults")
    p.add_argument("--history", metavar="DB",
                   help="add a section with the history of these runs' nodes in the results "
                        "store DB (an SQLite file or postgresql://…: docs/history.md)")
    p.add_argument("--format", choices=("html", "json"), default="html",
                   help="html: write the page (default); json: print the page's summary table "
                        "(each headline number, its interval, bound, ratio and verdict), the "
                        "model's judgement, the advice and the notices, and write nothing")
    p.set_defaults(func=main)


def main(args):
    missing = [p for p in args.paths + ([args.compare] if args.compare else []) if not Path(p).exists()]
    if missing:
        raise UsageError(f"'{missing[0]}' does not exist; expected a campaign directory or .jsonl file")
    if args.format == "json":
        print(json.dumps(report.summary_of(args.paths, args.title), indent=1, default=str))
        return 0
    first = Path(args.paths[0])
    out = Path(args.output) if args.output else (first if first.is_dir() else first.parent) / "report.html"
    if not out.parent.is_dir():   # a mistyped path is not created silently
        raise UsageError(f"-o '{out}': the directory '{out.parent}' does not exist; "
                         "expected a file in an existing directory")
    try:
        path = report.write(args.paths, out, args.title, compare_with=args.compare,
                            history_db=args.history)
    except OSError as e:
        raise UsageError(f"cannot write the report to '{out}': {e.strerror}") from None
    print(path)
    return 0
