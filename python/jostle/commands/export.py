"""`jostle export`: the store's numbers (or a run's, straight from its records) in the formats a
site's monitoring reads: OpenMetrics for node_exporter's textfile collector, JSON records
POSTed to an HTTP endpoint (docs/history.md, "The site's monitoring")."""

import argparse
import sys

from .. import units
from ..analysis import history
from ..errors import UsageError
from ..export import httpjson, latest
from ..export.exporters import EXPORTERS, Selection
from ..records import store, store_checks, store_docs
from . import _common
from . import history as history_cmd

ORDER = 48
EXAMPLES = """examples:
  jostle export --format openmetrics -o /var/lib/node_exporter/textfile/jostle.prom
  jostle export --format httpjson --url http://logstash.site:8080/ --class cpu
  jostle export /var/spool/jostle/check-c3-20261120T101500Z-4242.json --format openmetrics
  jostle export --format httpjson                       the JSON records on stdout, one a line

From the store (--db, as `jostle history`), the latest value of each series (--every: each
value selected), or straight from run files, campaigns and check records given as PATH.
exit status: 0 ok, 1 the endpoint refused a record, 2 bad input, {httpjson_exit} the endpoint
could not be reached: the records are in the spool, sent by the next export to it.""".format(
    httpjson_exit=store.EXIT_SPOOLED)


def register(sub):
    p = sub.add_parser("export", help="numbers out to the site's monitoring: OpenMetrics, HTTP "
                       "JSON", epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Write the store's latest values (or a run's) as OpenMetrics "
                                   "text or POST them as JSON records.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="run files, campaigns or check records (default: the store)")
    p.add_argument("--format", choices=EXPORTERS.names(), required=True)
    history_cmd.add_db_options(p)
    history_cmd.add_filters(p)
    p.add_argument("--every", action="store_true",
                   help="every value selected, not only the latest of each series")
    p.add_argument("--all-sizes", action="store_true",
                   help="every message size of a sweep (default: the sizes nearest to "
                        + ", ".join(units.size_label(x) for x in latest.NAMED_SIZES)
                        + " of each metric, docs/history.md; --size chooses others)")
    p.add_argument("--no-drift", dest="drift", action="store_false",
                   help="leave out the drifts found in the store (openmetrics)")
    o = p.add_argument_group("openmetrics")
    o.add_argument("-o", "--output", type=_common.out_file_type, metavar="FILE.prom",
                   help="write there (renamed into place whole, as the textfile collector "
                        "needs) instead of stdout")
    h = p.add_argument_group("httpjson")
    h.add_argument("--url", metavar="URL", help="POST each record there (default: "
                   "$JOSTLE_HTTPJSON_URL; none: print the records, one a line)")
    h.add_argument("--system", metavar="NAME", help="the records' check_system (the cluster)")
    h.add_argument("--spool", metavar="DIR", help="where unsent records wait (default: "
                   f"$JOSTLE_EXPORT_SPOOL, else {httpjson.DEFAULT_SPOOL})")
    h.add_argument("--attempts", type=_common.positive_int,
                   help=f"tries per record before it is spooled (default {httpjson.ATTEMPTS})")
    h.add_argument("--timeout", type=_common.positive_float,
                   help=f"seconds per try (default {httpjson.TIMEOUT_S:g})")
    p.set_defaults(func=main)


def _rows(args) -> tuple:
    """(rows, drifts, checks) of the selection: from PATHS, else from the store. CHECKS: every
    check run selected, whatever its verdict (a skipped or timed-out one measured nothing)."""
    q = history_cmd.query(args)
    if args.paths:
        found = store_docs.find(args.paths)
        for path, why in found.skipped[:10]:
            print(f"jostle: {path}: left out: {why}", file=sys.stderr)
        docs = found.docs + [d for _, d in found.spooled]
        rows = store_docs.rows_from_docs(docs, q)
        return rows, [], store_checks.runs_from_docs(docs, q) if store_checks.wanted(q) else []
    with store.open_store(history_cmd.database(args), create=False) as st:
        rows = st.points(q)
        checks = store_checks.runs_of_checks(st, q) if store_checks.wanted(q) else []
    drifts = history.view(rows).drifts if args.drift else []
    return rows, drifts, checks



def main(args):
    exporter = EXPORTERS[args.format]()
    for name, other in EXPORTERS.items():   # an option of another format: a mistake, said
        given = [f for k, f in other.options.items()
                 if k not in exporter.options and getattr(args, k, None) is not None]
        if given:
            raise UsageError(f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} for "
                             f"--format {name}, not {args.format}")
    rows, drifts, checks = _rows(args)
    if not args.all_sizes and not args.size:
        rows = latest.named_sizes(rows)
    if not rows and not checks:
        print("jostle: no value matches: nothing to export", file=sys.stderr)
    status, out, note = exporter.write(
        Selection(rows, drifts, checks, args.every),
        **{k: getattr(args, k) for k in exporter.options if getattr(args, k) is not None})
    sys.stdout.write(out)
    if note:
        print(note, file=sys.stderr)
    return status
