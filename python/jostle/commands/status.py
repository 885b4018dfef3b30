"""`jostle status DIR`: what a campaign holds (complete, partial, planned) and its batch jobs."""

import json
from pathlib import Path

from ..run import batch, slurm
from ..run.campaign import MANIFEST
from ..errors import UsageError
from ..records.lines import file_state
from ..records.sidecar import launcher_state, sidecar_path

ORDER = 91
STATES = ("complete", "partial", "damaged", "planned")


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
        path = done if done.exists() else partial if partial.exists() else None
        if path is None:
            runs.append({"name": r["name"], "state": "planned"})
            continue
        # The one judgement of a record (results.file_state), as report, plot and resume make it.
        v = file_state(path)
        runs.append({"name": r["name"], "state": v.state, "file": str(path),
                     "points": v.points, **({"problem": v.problem} if v.problem else {})})
        if v.state == "partial":
            try:
                side = json.loads(sidecar_path(path).read_text())
            except (OSError, ValueError):
                side = None
            runs[-1]["launcher"] = launcher_state(side if isinstance(side, dict) else None)
    jobs = [{**j, "state": slurm.job_state(j["job"])} for j in jobs]
    count = {s: sum(r["state"] == s for r in runs) for s in STATES}
    return {"campaign": str(directory), "runs": runs, "count": count, "jobs": jobs}


def main(args):
    st = campaign_status(Path(args.dir))
    if args.json:
        print(json.dumps(st, indent=1))
        return 0
    n = st["count"]
    print(f"campaign {st['campaign']}: {len(st['runs'])} run(s): "
          + ", ".join(f"{n[s]} {s}" for s in STATES if n[s] or s != "damaged"))
    for r in st["runs"]:
        extra = (f" ({r['points']} point line(s) in {r['file']}; launch: {r['launcher']})"
                 if r["state"] == "partial"
                 else f" ({r['problem']})" if r["state"] == "damaged" else "")
        print(f"  {r['state']:<9} {r['name']}{extra}")
    for j in st["jobs"]:
        print(f"job {j['job']}: {j['state']} (submitted {j['submitted']})")
    return 0
