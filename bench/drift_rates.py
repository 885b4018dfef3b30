#!/usr/bin/env python3
"""How well `jostle history` finds a node's drift, and how often it cries wolf.

A site's history simulated: NODES nodes of one class checked once a day for DAYS days by
`jostle check` (its records, as the check writes them into its spool: docs/records.md, "Check
records"), six values a check (the scan's fingerprint names: triad, memory_latency,
pingpong_latency, pingpong_bandwidth, latency_under_load, bandwidth_under_load), each node at
its own level (a spread of 5% between nodes), with the noise a check sees (1-4% from check to
check, and on the latencies and ratios a few spikes: 1-3% of the checks met a busy moment,
1.1-2x worse), 5% of the days without a check, and 2% of the checks skipped (the node busy).
Three drifts are planted, each on a node drawn at random:

  step-10   triad (memory bandwidth) 10% lower from a day drawn in [15, 50]
  slope-1   triad 1% lower every week from a day drawn in [5, 30]
  step+20   pingpong_latency (8 B) 20% higher from a day drawn in [15, 50]

The records go through the real path: written as files into a spool folder, added with
`jostle history add` into a new SQLite store (or --db postgresql://…, emptied first), read
back and judged by `jostle history`'s drift test (analysis/drift.py). Per seed: whether each
planted drift was found on its node and metric, the error of its date (the first check after
the change, against the day planted), its size; and every drift found elsewhere (false). A
step is found "with its date" when its first check after the change is within 2 days of the day
planted; a slope (no sharp start) when the day planted is inside the range of dates its fit
allows (the profile likelihood's 95% range, analysis/drift.py), one check's slack each side.

Targets (the issue's): the three found with their dates, at most one false drift over the
NODES x 6 series, in each of 20 seeds.

Usage: bench/drift_rates.py [--seeds 20] [--nodes 64] [--days 60] [--db URL] [--keep DIR]
"""

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

START = datetime(2026, 9, 1, 6, 0, tzinfo=timezone.utc)
# name -> (unit, worse, noise sd (log), spike share, class reference)
METRICS = {
    "triad": ("GB/s", "lower", 0.015, 0.0, 40.0),
    "memory_latency": ("ns", "higher", 0.01, 0.01, 95.0),
    "pingpong_latency": ("us", "higher", 0.03, 0.03, 0.45),
    "pingpong_bandwidth": ("MB/s", "lower", 0.02, 0.01, 9000.0),
    "latency_under_load": ("x", "higher", 0.04, 0.03, 1.8),
    "bandwidth_under_load": ("x", "higher", 0.03, 0.01, 1.3),
}
TOLERANCE = 0.10
PARAMS = {"pingpong_latency": {"size": 8}, "pingpong_bandwidth": {"size": 1 << 20},
          "triad": {"kernel": "triad", "phase": "compute"}}
DATE_TOLERANCE = 2.0    # days: a step's date


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def simulate(seed, nodes=64, days=60, skip_share=0.02, missing_share=0.05):
    """(check records, planted {(node, metric): (kind, size, day)})."""
    rng = np.random.default_rng(seed)
    a, b, c = (f"cn{i:03d}" for i in rng.choice(nodes, 3, replace=False))
    planted = {(a, "triad"): ("step", -0.10, float(rng.uniform(15, 50))),
               (b, "triad"): ("slope", -0.01, float(rng.uniform(5, 30))),
               (c, "pingpong_latency"): ("step", 0.20, float(rng.uniform(15, 50)))}
    recs = []
    for i in range(nodes):
        node = f"cn{i:03d}"
        level = {m: rng.normal(0, 0.05) for m in METRICS}
        for day in range(days):
            if rng.uniform() < missing_share:
                continue
            t = START + timedelta(days=day, hours=float(rng.uniform(0, 12)))
            d = (t - START).total_seconds() / 86400
            rec = {"type": "check", "schema": 1, "tool": "jostle check", "version": "sim",
                   "node": node, "class": "cpu", "time": iso(t),
                   "end": iso(t + timedelta(seconds=12)), "duration_s": 12.0, "budget_s": 15.0,
                   "verdict": "healthy", "exit_status": 0, "values": []}
            if rng.uniform() < skip_share:
                rec.update(verdict="skipped", exit_status=3,
                           reason="jostle: skipped: node busy: simulated")
                recs.append(rec)
                continue
            for m, (unit, worse, sd, spikes, ref) in METRICS.items():
                x = level[m] + rng.normal(0, sd)
                if rng.uniform() < spikes:
                    x += (1 if worse == "higher" else -1) * math.log(rng.uniform(1.1, 2.0))
                p = planted.get((node, m))
                if p:
                    kind, size, at = p
                    if kind == "step" and d >= at:
                        x += math.log1p(size)
                    elif kind == "slope":
                        x += max(0.0, d - at) / 7 * math.log1p(size)
                v = ref * math.exp(x)
                change = v / ref - 1
                bad = (change if worse == "higher" else -change) > TOLERANCE
                rec["values"].append({"name": m, "value": round(v, 6), "unit": unit,
                                      "reference": ref, "tolerance": TOLERANCE, "worse": worse,
                                      "change": round(change, 4),
                                      "verdict": "fail" if bad else "pass", "note": None,
                                      "params": PARAMS.get(m, {})})
            if any(v["verdict"] == "fail" for v in rec["values"]):
                rec.update(verdict="unhealthy", exit_status=1)
            recs.append(rec)
    return recs, planted


def write_spool(recs, folder: Path):
    folder.mkdir(parents=True, exist_ok=True)
    for k, r in enumerate(recs):
        stamp = r["time"].replace("-", "").replace(":", "")
        (folder / f"check-{r['node']}-{stamp}-{k}.json").write_text(json.dumps(r, indent=1))


def _day(t) -> float:
    return (datetime.fromisoformat(str(t).replace("Z", "+00:00")) - START).total_seconds() / 86400


def judge(drifts, planted, days):
    found, false = {}, []
    for t in drifts:
        key = (t.series.node, t.series.key[2])
        if key in planted:
            kind, size, at = planted[key]
            lo, since, hi = (_day(x) for x in (t.since_range[0], t.since, t.since_range[1]))
            found[key] = {"shape": t.shape, "date_error_days": since - at,
                          "range_days": [lo - at, hi - at], "change": t.change,
                          "per_week": t.per_week, "p": t.p}
        else:
            false.append(t.message())
    out = {}
    for key, (kind, size, at) in planted.items():
        name = {("step", True): "step-10", ("slope", True): "slope-1",
                ("step", False): "step+20"}[(kind, size < 0)]
        f = found.get(key)
        # a step: its first check after the change within 2 days of it; a slope (no sharp
        # start): the day planted inside the dates the data allow, one check's slack each side
        dated = f is not None and (abs(f["date_error_days"]) <= DATE_TOLERANCE if kind == "step"
                                   else f["range_days"][0] - 1 <= 0 <= f["range_days"][1] + 1)
        out[name] = {"node": key[0], "day": round(at, 1), "found": f is not None,
                     "dated": dated, **(f or {})}
    return out, false


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--nodes", type=int, default=64)
    ap.add_argument("--days", type=int, default=60)
    ap.add_argument("--db", help="a postgresql:// store to use (emptied first) instead of a new "
                                 "SQLite file per seed")
    ap.add_argument("--keep", help="keep each seed's spool and store under this folder")
    ap.add_argument("--json", action="store_true", help="one JSON object per seed on stdout")
    args = ap.parse_args(argv)
    if args.seeds < 1 or args.nodes < 3 or args.days < 10:
        ap.error("--seeds >= 1, --nodes >= 3 and --days >= 10")

    from jostle.analysis import history
    from jostle.cli import main as jostle
    from jostle.records import store

    print(f"# {os.uname().nodename}: {_cpu()}; {args.nodes} nodes x {len(METRICS)} metrics x "
          f"{args.days} days, {args.seeds} seeds", flush=True)
    totals = {"step-10": [0, 0], "slope-1": [0, 0], "step+20": [0, 0]}
    false_counts, started = [], time.time()
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        t0 = time.time()
        work = Path(args.keep) / f"seed{seed}" if args.keep else \
            Path(tempfile.mkdtemp(prefix="drift-rates-"))
        if work.exists() and args.keep:
            shutil.rmtree(work)
        recs, planted = simulate(seed, args.nodes, args.days)
        write_spool(recs, work / "spool")
        db = args.db or str(work / "store.sqlite")
        if args.db:
            with store.open_store(db) as st:
                st._exec("DELETE FROM jostle_points")
                st._exec("DELETE FROM jostle_runs")
        rc = jostle(["history", "add", str(work / "spool"), "--db", db,
                     "--spool", str(work / "store-spool")])
        if rc != 0:
            print(f"seed {seed}: jostle history add exited {rc}", file=sys.stderr)
            return 1
        with store.open_store(db, create=False) as st:
            rows = st.points(store.Query(kinds=("check",)))
        v = history.view(rows)
        res, false = judge(v.drifts, planted, args.days)
        false_counts.append(len(false))
        for name, r in res.items():
            totals[name][0] += r["found"]
            totals[name][1] += r["dated"]
        if args.json:
            print(json.dumps({"seed": seed, "planted": res, "false": false,
                              "series_tested": len(v.tests), "seconds": time.time() - t0}))
        else:
            cells = []
            for name, r in res.items():
                cells.append(f"{name} {r['node']} day {r['day']:>4}: " + (
                    f"{r['shape']} {r['change']:+.1%} date {r['date_error_days']:+.1f} d"
                    + ("" if r["dated"] else " (date off)")
                    if r["found"] else "MISSED"))
            print(f"seed {seed:>2}: " + " | ".join(cells) + f" | false {len(false)} "
                  f"({len(v.tests)} series, {time.time() - t0:.0f} s)", flush=True)
            for m in false:
                print(f"          false: {m}")
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    n = args.seeds
    print(f"# found (with its date) over {n} seeds: " + ", ".join(
        f"{k} {v[0]}/{n} ({v[1]}/{n})" for k, v in totals.items()))
    print(f"# false drifts per seed: mean {sum(false_counts) / n:.2f}, max {max(false_counts)}, "
          f"seeds with any {sum(1 for f in false_counts if f)}/{n}; {time.time() - started:.0f} s")
    ok = all(v[1] == n for v in totals.values()) and max(false_counts) <= 1
    print(f"# targets (all three found with their dates, at most one false drift a seed): "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def _cpu() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
