"""`jostle status DIR`: what a campaign holds (complete, partial, planned) and its batch jobs."""

import json
from pathlib import Path

from .. import batch
from ..campaign import MANIFEST, _count_points
from ..errors import UsageError

ORDER = 91


def register(sub):
    p = sub.add_parser("status", help="a campaign's runs (complete, partial, planned) and jobs",
                       description="Show which runs of a campaign directory are complete, "
                                   "partial or still planned, and the state of the batch jobs "
                                   "`jostle submit` started for it.")
    p.add_argument("dir", metavar="DIR", help="a campaign directory (OUTPUT-DIR/CAMPAIGN)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=main)


def campaign_status(directory: Path) -> dict:
    jobs = batch.read_jobs(directory)
    try:
        planned = json.loads((directory / MANIFEST).read_text())["runs"]
    except (OSError, ValueError, KeyError, TypeError):
        planned = None
    if planned is None and not jobs:
        raise UsageError(f"'{directory}' is not a campaign directory: no readable {MANIFEST} "
                         "(it is written when a campaign starts)") from None
    runs = []
    for r in planned or []:   # none yet: a submitted job that has not started its campaign
        done = directory / f"{r['name']}.jsonl"
        partial = Path(str(done) + ".partial")
        if done.exists():
            runs.append({"name": r["name"], "state": "complete", "file": str(done)})
        elif partial.exists():
            runs.append({"name": r["name"], "state": "partial", "file": str(partial),
                         "points": _count_points(partial)})
        else:
            runs.append({"name": r["name"], "state": "planned"})
    jobs = [{**j, "state": batch.job_state(j["job"])} for j in jobs]
    count = {s: sum(r["state"] == s for r in runs) for s in ("complete", "partial", "planned")}
    return {"campaign": str(directory), "runs": runs, "count": count, "jobs": jobs}


def main(args):
    st = campaign_status(Path(args.dir))
    if args.json:
        print(json.dumps(st, indent=1))
        return 0
    n = st["count"]
    print(f"campaign {st['campaign']}: {len(st['runs'])} run(s): {n['complete']} complete, "
          f"{n['partial']} partial, {n['planned']} planned")
    for r in st["runs"]:
        extra = f" ({r['points']} point line(s) in {r['file']})" if r["state"] == "partial" else ""
        print(f"  {r['state']:<9} {r['name']}{extra}")
    for j in st["jobs"]:
        print(f"job {j['job']}: {j['state']} (submitted {j['submitted']})")
    return 0
