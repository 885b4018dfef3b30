"""`jostle history`: the results store (docs/history.md). `history add` records campaigns, scans
and checks into it; `history` alone reads a node's (or a class's) metrics over time, as a
table, JSON or CSV, figures and an HTML page, with the drifts found in them."""

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path

from .. import units
from ..analysis import drift, history
from ..records import store, store_checks, store_spool
from ..records.store_keys import utc
from . import _common
from . import _options
from ._record import database, record, site_defaults

ORDER = 47
EXIT_SPOOLED = store.EXIT_SPOOLED
EXAMPLES = f"""examples:
  jostle history add results/                      every campaign and scan under results/
  jostle history add /var/spool/jostle --db postgresql://jostle@db.site/jostle
  jostle history add                               what the spool kept while the store was away
  jostle history --node c3                         node c3's metrics over time, drifts named
  jostle history --class cpu --metric triad --days 30 --format csv > triad.csv
  jostle history --figures fig/ --report history.html

The store: --db PATH (an SQLite file) or --db postgresql://…, else $JOSTLE_DB, else the site
file's [check] store (--site, $JOSTLE_SITE), else {store.DEFAULT_PATH}. `history add` with no
PATH adds what the store's spool kept, and the site's check spool ([check] spool).
exit status: 0 ok, 1 a record or the store failed, 2 bad input (a file that is not a store
among them), {EXIT_SPOOLED} the store could not be reached: the records are in the spool."""


def _split(values) -> tuple:
    return tuple(v.strip() for vs in values or () for v in vs.split(",") if v.strip())


def date_type(text, end=False):
    """YYYY-MM-DD (its first second, or with END its last) or an ISO 8601 time, as UTC text."""
    t = text.strip()
    try:
        return utc(t + ("T23:59:59Z" if end else "T00:00:00Z") if len(t) == 10 else t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected a date "
                                         "(2026-11-20) or an ISO 8601 time") from None


def until_type(text):
    return date_type(text, end=True)


def fraction_type(text):
    v = _common.positive_float(text)
    if not v < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected a number in (0, 1)")
    return v


def effect_type(text):
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and 0 <= v < 10):
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected a fraction ≥ 0 "
                                         "(0.03 for 3%)")
    return v


def add_db_options(p, suppress=False):
    _options.add(p, "db", suppress=suppress)
    _options.add(p, "site", "the site file (docs/check.md) whose [check] store names the store",
                 suppress=suppress)


def add_filters(p):
    g = p.add_argument_group("which values")
    g.add_argument("--node", action="append", metavar="NODE[,NODE…]",
                   help="these nodes (names or shell patterns: 'c*')")
    g.add_argument("--class", dest="cls", action="append", metavar="NAME",
                   help="the nodes of these classes")
    g.add_argument("--metric", action="append", metavar="NAME",
                   help="these metrics (latency, bandwidth, a check's triad, memory_latency…)")
    g.add_argument("--benchmark", action="append", metavar="NAME",
                   help="these benchmarks (check: the values of `jostle check`)")
    g.add_argument("--size", action="append", type=_common.bytes_type, metavar="BYTES",
                   help="the points at this message size")
    g.add_argument("--since", type=date_type, metavar="DATE", help="from this date (UTC)")
    g.add_argument("--until", type=until_type, metavar="DATE",
                   help="up to this date (UTC), that day included")
    g.add_argument("--days", type=_common.positive_int, metavar="N", help="the last N days")


def register(sub):
    p = sub.add_parser("history", help="the results store: add runs and checks, read a node's "
                       "history, find its drifts", epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Read the results store: each node's metrics over time, "
                                   "and the drifts found in them (docs/history.md).")
    add_db_options(p)
    add_filters(p)
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="table: one row per series; json: the campaigns, runs and series with "
                        "their values; csv: one row per value")
    p.add_argument("--figures", type=_common.out_dir_type, metavar="DIR",
                   help="draw each series' figure there (PNG and SVG)")
    p.add_argument("--report", type=_common.out_file_type, metavar="FILE.html",
                   help="write the history as one HTML page")
    p.add_argument("--alpha", type=fraction_type, default=drift.ALPHA,
                   help="the chance of one false drift over all the series within a year of "
                        f"daily looks (default {drift.ALPHA})")
    p.add_argument("--min-effect", type=effect_type, default=drift.MIN_EFFECT,
                   help=f"the smallest change reported (default {drift.MIN_EFFECT}: 3%%)")
    acts = p.add_subparsers(dest="action", metavar="ACTION")
    a = acts.add_parser("add", help="record campaigns, scans and checks into the store",
                        description="Add every complete run file and check record under PATH "
                                    "(and what the spool kept) to the store; a run already "
                                    "there is not added again.", epilog=EXAMPLES,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("paths", nargs="*", metavar="PATH",
                   help="campaign or scan folders, check spools, run files, check records")
    add_db_options(a, suppress=True)
    a.add_argument("--campaign", metavar="NAME", help="the campaign of these runs (default: "
                   "each run's folder)")
    a.add_argument("--class", dest="add_class", metavar="NAME",
                   help="the class of the nodes of runs that do not say theirs")
    a.add_argument("--spool", metavar="DIR", help="where records wait while the store cannot "
                   f"be reached (default: $JOSTLE_STORE_SPOOL, else {store_spool.DEFAULT})")
    p.set_defaults(func=main)


def query(args) -> store.Query:
    since = args.since
    if args.days:
        cut = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - args.days * 86400))
        since = max(since or cut, cut)
    from ..sizes import parse_bytes
    return store.Query(nodes=_split(args.node), classes=_split(args.cls),
                       metrics=_split(args.metric), benchmarks=_split(args.benchmark),
                       sizes=tuple(parse_bytes(s) for s in args.size or ()),
                       since=since, until=args.until)


# ---------------------------------------------------------------- add

def add(args) -> int:
    paths = list(args.paths)
    if not paths:      # the checks' own spool, when the site file names it
        checks = site_defaults(getattr(args, "site", None)).get("spool")
        paths = [checks] if checks and Path(checks).is_dir() else []
    return record(paths, database(args), args.campaign, args.add_class, args.spool)


# ---------------------------------------------------------------- show

def _table(rows):
    heads = ["node", "class", "series", "points", "first", "last", "latest", "median", "p5",
             "p95", "latest/median", "drift"]
    cells = [[r["node"], r["class"] or "-", r["series"], str(r["points"]), r["first"][:10],
              r["last"][:10], units.number(r["latest"]) + " " + r["unit"],
              units.number(r["median"]), units.number(r["p5"]), units.number(r["p95"]),
              f"{r['latest_vs_median']:+.1%}", r["drift"] or "-"] for r in rows]
    widths = [max(len(h), *(len(x[i]) for x in cells)) if cells else len(h)
              for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip()]
    lines += ["  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)


def checks_table(checks) -> str:
    """One row per node: its checks, how many of each verdict (a timed-out or skipped check
    counted beside the measured ones), and its latest check's time, verdict and reason."""
    nodes = {}
    for chk in checks:
        nodes.setdefault(chk["node"], []).append(chk)
    heads = ["node", "class", "checks", "verdicts", "last", "last verdict", "reason"]
    cells = []
    for node, cs in sorted(nodes.items()):
        counts = {}
        for chk in cs:
            counts[chk["verdict"] or "-"] = counts.get(chk["verdict"] or "-", 0) + 1
        last = cs[-1]
        cells.append([node, last["class"] or "-", str(len(cs)),
                      ", ".join(f"{n} {v}" for v, n in sorted(counts.items())),
                      last["time"][:16], last["verdict"] or "-",
                      str((last["meta"] or {}).get("reason") or "-").removeprefix("jostle: ")])
    widths = [max(len(h), *(len(x[i]) for x in cells)) for i, h in enumerate(heads)]
    lines = ["checks:", "  ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip()]
    lines += ["  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)


def check_json(chk) -> dict:
    """A check run as `history --format json` lists it, whatever its verdict; `measured`:
    whether its values count in the series (analysis/history.py's UNUSABLE_VERDICTS)."""
    m = chk["meta"] or {}
    return {"time": chk["time"], "node": chk["node"], "class": chk["class"],
            "verdict": chk["verdict"],
            "measured": (chk["verdict"] or "") not in history.UNUSABLE_VERDICTS,
            **{k: m.get(k) for k in ("duration_s", "budget_s", "timeout_s", "exit_status",
                                     "reason", "unfinished", "nics")},
            "run": chk["name"], "uid": chk["uid"]}


def _num(x):
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def as_json(v: history.View, runs, where, checks=()) -> dict:
    campaigns = {}
    for r in runs:
        cmp = campaigns.setdefault(r["campaign"] or "-", {"campaign": r["campaign"], "runs": 0,
                                                          "first": r["time"], "last": r["time"]})
        cmp["runs"] += 1
        cmp["last"] = max(cmp["last"], r["time"])
    found = {id(t.series): t for t in v.drifts}
    return {"store": where, "schema": store.schema.SCHEMA_VERSION,
            "campaigns": list(campaigns.values()), "runs": runs,
            "series": [{"node": s.node, "class": s.cls or None, "series": s.label,
                        "benchmark": s.key[1], "metric": s.key[2], "unit": s.unit,
                        "params": json.loads(s.key[4]), "better": s.better,
                        "values": [{"time": t, "value": _num(x), "ci95": [_num(lo), _num(hi)],
                                    "run": r["name"], "campaign": r["campaign"],
                                    "verdict": r["verdict"], "flagged": bool(r.get("flagged"))}
                                   for t, x, lo, hi, r in zip(s.times, s.values, s.lo, s.hi,
                                                              s.rows)],
                        "drift": found[id(s)].to_dict() if id(s) in found else None}
                       for s in v.series],
            "drifts": [t.to_dict() for t in v.drifts], "tested": len(v.tests),
            "method": v.method, "checks": [check_json(x) for x in checks]}


def _csv(v: history.View):
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["time", "node", "class", "campaign", "run", "kind", "verdict", "benchmark",
                "metric", "params", "unit", "value", "ci95_lo", "ci95_hi", "reference",
                "tolerance", "flagged"])
    for r in v.rows:
        w.writerow([r["time"], r["node"], r["class"] or "", r["campaign"] or "", r["name"],
                    r["kind"], r["verdict"] or "", r["benchmark"], r["metric"],
                    json.dumps(r["params"], sort_keys=True), r["unit"] or "",
                    *("" if r.get(k) is None else r[k]
                      for k in ("median", "ci95_lo", "ci95_hi", "reference", "tolerance")),
                    int(bool(r.get("flagged")))])


def show(args) -> int:
    db = database(args)
    with store.open_store(db, create=False) as st:
        q = query(args)
        rows, runs = st.points(q), st.runs(q)
        checks = store_checks.runs_of_checks(st, q) if store_checks.wanted(q) else []
    if not rows and not checks:
        print(f"jostle: nothing in {store.shown(db)} matches", file=sys.stderr)
    v = history.view(rows, args.alpha, args.min_effect)
    if args.format == "json":
        json.dump(as_json(v, runs, store.shown(db), checks), sys.stdout, indent=1)
        print()
    elif args.format == "csv":
        _csv(v)
    else:
        print(_table(history.summary(v.series, v.drifts)))
        if checks:
            print()
            print(checks_table(checks))
    for t in v.drifts:
        print(f"jostle: drift: {t.message()}", file=sys.stderr)
    if args.figures or args.report:
        from .. import figures, report
        from ..figures import history as history_figures
        if args.report:     # its figures drawn once, saved in --figures too
            what = ", ".join(_split(args.node) or _split(args.cls)) or "every node"
            section = report.history_section(v, store.shown(db), what,
                                             figures_dir=args.figures)
            for f in section["figures"] if args.figures else ():
                for ext in figures.FORMATS:
                    print(Path(args.figures) / f"{f['id']}.{ext}")
            print(report.history_page(section, args.report, f"jostle history: {what}"))
        elif args.figures:
            figs = history_figures.build(v.series, v.drifts, v.bands)
            for p in figures.write(figs, args.figures):
                print(p)
    return 0


def main(args):
    if args.action == "add":
        return add(args)
    return show(args)
