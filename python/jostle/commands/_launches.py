"""What every study that measures in launches prints after them (`jostle pingpong`, `nuioa`,
`contention`): per setting (its K launches, NAME-r1 … NAME-rK) the median over the launches,
the 95% interval the next invocation's median falls in, a launch's own interval beside it and
the points that vary between launches (analysis.launches), and CAMPAIGN/SETTING.summary.json."""

import json
import sys

from ..analysis import launches
from ..records import lines, repeats


def report_launches(camp, runs, k, rows=True) -> list:
    """Per setting of RUNS (its K launches): the table of the median over launches, the
    interval over them and the within-launch one on stdout (ROWS false: its heading only), and
    the same per point, every metric, in CAMPAIGN/SETTING.summary.json; the files."""
    written = []
    settings = {}
    for r in runs:
        settings.setdefault(repeats.setting(r.name) if k > 1 else r.name, []).append(r)
    for name, specs in settings.items():
        done = [lines.read(camp.output(r)) for r in specs if camp.output(r).exists()]
        points = launches.summarise(done)
        if not points:
            continue
        metric = launches.headline_metric(points)
        varying = sum(1 for p in points if p["between"] and p["metric"] == metric)
        print(launches.heading(name, len(done), varying, launches.stopped_early(points, metric)))
        for line in launches.table(points, len(done)) if rows else ():
            print("  " + line)
        out = camp.dir / f"{name}.summary.json"
        out.write_text(json.dumps({"setting": name, "launches": len(done),
                                   "runs": [r.name for r in specs], "unit": "launch",
                                   "ci95": launches.interval_kind(len(done)),
                                   "points": points}, indent=1, default=str) + "\n")
        print(f"jostle: summary over the launches in {out}", file=sys.stderr)
        written.append(out)
    return written
