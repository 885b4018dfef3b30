"""`jostle baseline learn`: a class's references learned from the results store's history
(docs/history.md, "References learned from history"), for `jostle check` (the class's
reference in the site file), `jostle scan --baseline` and `jostle compare` / `baseline check`
(a baseline file)."""

import json
import sys
import time
from pathlib import Path

from ..analysis import check_reference, check_site, history
from ..errors import UsageError
from ..records import store
from . import _common
from . import _options
from . import history as history_cmd


def register(acts):
    p = acts.add_parser(
        "learn", help="learn a class's references from the results store's history",
        description="The reference and tolerance of each check of class NAME from the good "
                    "values of its nodes over the last DAYS days in the results store: the "
                    "values their checks failed, and a series' values from the start of a drift "
                    "found in it, left out; the median of the nodes and the spread of the worse "
                    "5%, as `jostle check --save-reference` derives them (docs/check.md).")
    p.add_argument("--class", dest="learn_class", required=True, metavar="NAME",
                   help="the class (as `jostle check` recorded it, or `history add --class`)")
    p.add_argument("--days", type=_common.positive_int, default=30,
                   help="the last DAYS days of the store (default 30)")
    _options.add(p, "db")
    _options.add(p, "site", "write the references into class NAME of this site file (its "
                 "other checks kept)")
    p.add_argument("--name", type=_common.name_type, metavar="BASELINE",
                   help="also save the class's runs (scans: one pooled run per node) as this "
                        "baseline, for `scan --baseline` and `baseline check`")
    _options.add(p, "baselines")
    p.add_argument("--format", choices=("table", "json"), default="table")


def learn(db, cls, days):
    """(references {check: ref}, baseline entries, what was read) of class CLS."""
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - days * 86400))
    with store.open_store(db, create=False) as st:
        rows = st.points(store.Query(classes=(cls,), since=since))
    if not rows:
        raise UsageError(f"--class '{cls}': the store {store.shown(db)} holds no value of this "
                         f"class in the last {days} days")
    v = history.view(rows)
    good = history.learnable(rows, v.drifts)
    refs = check_reference.references_from_samples(history.check_samples(good))
    entries = history.baseline_entries(good)
    read = {"values": len(rows), "good": len(good), "drifts": [t.message() for t in v.drifts],
            "nodes": len({r["node"] for r in rows}), "since": since}
    return refs, entries, read


def main(args, keep) -> int:
    """KEEP: baseline.keep (passed in: baseline imports this module)."""
    db = args.db or history_cmd.database(args)
    refs, entries, read = learn(db, args.learn_class, args.days)
    if not refs and not entries:
        raise UsageError(f"--class '{args.learn_class}': no good value to learn from in the last "
                         f"{args.days} days ({read['values']} values, none good)")
    if args.format == "json":
        json.dump({"class": args.learn_class, "days": args.days, "store": store.shown(db),
                   "references": refs, **read}, sys.stdout, indent=1)
        print()
    else:
        print("check\treference\tunit\ttolerance\tspread\trepeatability\tnodes\tchecks")
        for name, r in refs.items():
            print(f"{name}\t{r['value']:g}\t{r['unit']}\t{r['tolerance']:.1%}\t{r['spread']:.1%}\t"
                  f"{r['repeatability']:.1%}\t{r['nodes']}\t{r['checks']}")
    print(f"jostle: class {args.learn_class}: {read['good']} good values of {read['values']} "
          f"from {read['nodes']} node(s) since {read['since'][:10]}; "
          f"{len(read['drifts'])} drift(s) left out", file=sys.stderr)
    for d in read["drifts"]:
        print(f"jostle: left out: {d}", file=sys.stderr)
    if args.site and refs:
        path = Path(args.site)
        with check_site.locked(path):
            site = check_site.load(path)
            if args.learn_class not in site.classes:
                raise UsageError(f"--class '{args.learn_class}': unknown class in {path}; "
                                 "allowed: " + (", ".join(site.classes) or "none"))
            cls = site.classes[args.learn_class]
            # as --save-reference: a bound that a node at half speed passes is none, so such
            # a reference is not written (the others are), and said
            wide = {k: r for k, r in refs.items() if check_reference.too_wide({k: r})}
            for k, r in wide.items():
                print(f"jostle: {k} left out of the site file: its tolerance would be "
                      f"{r['tolerance']:.0%} (over {check_reference.MAX_TOLERANCE:.0%}: a node "
                      "at half speed would pass)", file=sys.stderr)
            refs = {k: r for k, r in refs.items() if k not in wide}
            if not refs:
                raise UsageError(f"baseline learn --site: no reference of class "
                                 f"{args.learn_class} can judge (every tolerance over "
                                 f"{check_reference.MAX_TOLERANCE:.0%}); nothing written")
            cls.reference = {**cls.reference, **refs}
            check_site.write(site)
        print(f"jostle: {len(refs)} reference(s) of class {args.learn_class} written into {path}",
              file=sys.stderr)
    if args.name:
        if not entries:
            raise UsageError(f"--name: class '{args.learn_class}' has no run in the store to "
                             "keep as a baseline (only checks)")
        print(keep(args, args.name, entries,
                   f"learned: class {args.learn_class}, {args.days} days of {store.shown(db)}"))
    return 0
