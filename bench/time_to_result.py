#!/usr/bin/env python3
"""Time to a result: the default intra-node ping-pong, 0 - 4 MiB, to +-1% at every point,
against OSU's method, side by side in one run of this script.

Each round launches, in turn (which goes first alternates round by round), the two whole
commands a user would run:

- jostle: `jostle-bench pingpong --output RUN` with its defaults (sizes 0 and 1 B - 4 MiB,
  --precision 0.01: every point until the 95% interval of its median is within 1%, or the
  clock's tick keeps it wider and the point says it is resolution-limited; --sample-reps auto);
- OSU: the reference latency loop with osu_latency's default iterations over the same sizes
  (`ref_osu sweep`: 10 000 + 100 up to 8 KiB, 1 000 + 10 above; bench/ref/ref_osu.c).

Printed: the machine and the load, each round's wall times and their ratio, the median ratio
(target <= 0.3), and how jostle's points ended: converged, resolution-limited (with the tick),
or neither (named: the target is every point one or the other).  The time is wall time of the
whole command, launch and MPI_Init included on both sides.

Usage: bench/time_to_result.py [--build build/openmpi] [--rounds 3] [jostle-bench options...]
       (options after the known ones go to jostle-bench, e.g. --sample-reps 1 to see the
       per-operation samples' cost)
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import checkout_venv
from checkout_venv import at_least_one, machine, timed

checkout_venv.use()
ROOT = checkout_venv.ROOT
from jostle.records.results import load_run  # noqa: E402

SIZES = [0] + [1 << k for k in range(23)]  # jostle-bench pingpong's default 0:4M


def outcome(points):
    """(converged, resolution-limited [(size, tick)], neither [(size, half-width %)]) of the
    latency lines."""
    conv, limited, neither = 0, [], []
    for p in points:
        if p["metric"] != "latency":
            continue
        if p.get("converged"):
            conv += 1
        elif p.get("resolution_limited"):
            limited.append((p["params"]["size"], p.get("tick")))
        else:
            lo, hi = p["ci95"]
            neither.append((p["params"]["size"], 50 * (hi - lo) / p["median"]))
    return conv, limited, neither


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=str(ROOT / "build" / "openmpi"))
    ap.add_argument("--rounds", type=at_least_one, default=3, help="rounds (default 3)")
    a, extra = ap.parse_known_args()
    load0 = os.getloadavg()
    print(f"# {machine()}; {a.build}; {a.rounds} rounds, jostle and the OSU-method loop "
          f"alternating; load average at start {load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f}")
    print(f"# jostle-bench pingpong {' '.join(extra) or '(defaults)'} --output RUN   vs   "
          f"ref_osu sweep {SIZES[0]} {SIZES[1]} … {SIZES[-1]}")
    ratios, last = [], None
    print(f"{'round':>5}{'jostle s':>10}{'OSU s':>9}{'ratio':>8}{'converged':>11}"
          f"{'res.-lim.':>10}{'neither':>9}{'reps/sample 0-8 B':>20}")
    for k in range(a.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            run = os.path.join(tmp, "pp.jsonl")
            jcmd = checkout_venv.launch_line(a.build, os.path.join(a.build, "jostle-bench"),
                                             ["pingpong", "--quiet", "--output", run, *extra])
            rcmd = checkout_venv.launch_line(a.build, os.path.join(a.build, "ref_osu"),
                                             ["sweep", *map(str, SIZES)], bind=True)
            if k % 2 == 0:
                tj, tr = timed(jcmd), timed(rcmd)
            else:
                tr, tj = timed(rcmd), timed(jcmd)
            with open(run) as f:
                lines = [json.loads(x) for x in f]
            load_run(run)  # judged as every reader judges it
        pts = [p for p in lines if p.get("type") == "point"]
        conv, limited, neither = outcome(pts)
        reps = sorted({p.get("reps_per_sample", 1) for p in pts
                       if p["metric"] == "latency" and p["params"]["size"] <= 8})
        ratios.append(tj / tr)
        last = (conv, limited, neither, pts)
        print(f"{k + 1:>5}{tj:>10.2f}{tr:>9.2f}{tj / tr:>8.3f}{conv:>11}{len(limited):>10}"
              f"{len(neither):>9}{','.join(map(str, reps)):>20}")
    q = statistics.median(ratios)
    load1 = os.getloadavg()
    conv, limited, neither, pts = last
    print(f"\nmedian ratio {q:.3f} (target <= 0.3: {'PASS' if q <= 0.3 else 'FAIL'}); load "
          f"average at the end {load1[0]:.1f}")
    print(f"last round: {conv} of {conv + len(limited) + len(neither)} points converged, "
          f"{len(limited)} resolution-limited"
          + (f" ({', '.join(f'{s} B at {t * 1e3:.1f} ns' for s, t in limited)})" if limited else "")
          + (f", {len(neither)} neither: " + ", ".join(f"{s} B +-{w:.1f}%" for s, w in neither)
             if neither else "")
          + f"  (target: every point converged or resolution-limited: "
            f"{'PASS' if not neither else 'FAIL'})")
    lat = [p for p in pts if p["metric"] == "latency"]
    spent = sum(p["elapsed_s"] for p in lat)
    worst = max(lat, key=lambda p: p["elapsed_s"])
    print(f"# jostle's last round: {spent:.2f} s in the points; the longest, {worst['params']['size']} "
          f"B: {worst['n']} samples of {worst.get('reps_per_sample', 1)} operation(s) in "
          f"{worst['elapsed_s']:.2f} s")
    return 0 if q <= 0.3 and not neither else 1


if __name__ == "__main__":
    sys.exit(main())
