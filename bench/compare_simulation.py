#!/usr/bin/env python3
"""Do `jostle compare`'s intervals cover, how often does it cry wolf, and does its sweep verdict
find a slowdown common to every size? A simulation driven by this project's own variance
between jobs, run through the code itself (jostle.analysis.comparison.compare).

Each simulated campaign is a ping-pong sweep of 23 sizes (1 B - 4 MiB, powers of two), one
run per MPI job: the log of a job's median at size s is mu_s + shift + sigma_s z (z standard
normal, independent between jobs and sizes; --common F puts a share F of the variance in one
draw per job, common to every size), and each run's own 95% interval of its median is ±0.2%
(small next to the job-to-job spread, as on the machines measured).

sigma_s, the profile:
- `measured` (default): the MAD-based standard deviation between jobs of the log median
  latency measured by bench/compare_targets.py over 120 jobs on the 2-core VM
  (docs/validation.md, 2026-11-25) at 1 B, 64 B, 1 KiB, 4 KiB, 64 KiB, 256 KiB, 512 KiB,
  1 MiB, 2 MiB and 4 MiB, interpolated in log size in between;
- `spike`: 22 sizes at 0.03 and 1 MiB at 0.30 (the case where one prior for the whole sweep
  fails);
- `--records DIR`: kept records, a campaign of one command's K jobs (NAME-r1 … NAME-rK,
  `--runs K`, K >= 5): the MAD-based standard deviation of the log median latency per size.

Printed, per profile and runs per side (3 against 3, 5 against 5):
- coverage of the 95% interval per size, over the A/A and the ×1.10 sweeps (target >= 93%
  at every size);
- A/A: the share of sweeps with any false verdict, a point or the sweep slower or faster
  (target <= 5%);
- ×1.10 at every size: the share of sweeps whose sweep verdict is `slower` (target >= 90% at
  5 against 5), and the share of points called slower;
- the share of those uniform sweeps (A/A and ×1.10) said to have sizes that disagree
  (Cochran's Q, analysis/heterogeneity.py), and of sweeps whose 12 smallest sizes are ×0.5
  and 11 largest ×1.10 said to (target >= 95%: issue 45).

Usage: bench/compare_simulation.py [--sweeps 1000] [--profile measured|spike|none]... [--runs 3,5]
                                   [--records DIR] [--common 0] [--seed 1]
"""
import argparse
import math
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkout_venv
from checkout_venv import machine

checkout_venv.use()
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from jostle.analysis import comparison, stats  # noqa: E402

SIZES = [1 << k for k in range(23)]
MEASURED = {1: 0.09, 64: 0.10, 1024: 0.11, 4096: 0.14, 65536: 0.15, 262144: 0.22,
            524288: 0.39, 1 << 20: 1.49, 2 << 20: 0.22, 4 << 20: 0.15}
WITHIN = 0.002      # a run's own 95% interval of its median: ±0.2%
SLOWDOWN = 1.10


def measured_profile() -> np.ndarray:
    known = sorted(MEASURED)
    return np.exp(np.interp(np.log2(SIZES), np.log2(known), [math.log(MEASURED[k]) for k in known]))


def spike_profile() -> np.ndarray:
    sd = np.full(len(SIZES), 0.03)
    sd[SIZES.index(1 << 20)] = 0.30
    return sd


def records_profile(folder) -> np.ndarray:
    from jostle.records.results import load
    runs = [r for r in load([folder]) if r.benchmark == "pingpong"]
    if len(runs) < 5:
        sys.exit(f"--records {folder}: {len(runs)} ping-pong run(s); at least 5 jobs are needed")
    by_size = {}
    for r in runs:
        lat = r.points[r.points["metric"] == "latency"]
        for s, m in zip(lat["size"], lat["median"]):
            if s in SIZES and m > 0:
                by_size.setdefault(int(s), []).append(math.log(m))
    missing = [s for s in SIZES if len(by_size.get(s, [])) < 5]
    if missing:
        sys.exit(f"--records {folder}: sizes {missing[:3]}… have fewer than 5 jobs; "
                 "measure 1:4M (every power of two)")
    return np.array([stats.mad(by_size[s]) for s in SIZES])


def side(label, logs, lib="Open MPI 4.1.4") -> comparison.Points:
    """LOGS (jobs × sizes) as one side of a comparison: one run per job."""
    rows = []
    for j, row in enumerate(logs):
        for s, y in zip(SIZES, row):
            m = math.exp(y)
            rows.append({"size": s, "mode": "pingpong", "metric": "latency", "unit": "us",
                         "n": 100, "median": m, "ci95_lo": m * (1 - WITHIN),
                         "ci95_hi": m * (1 + WITHIN), "run": f"{label}/pp-r{j + 1}.jsonl",
                         "digest": f"{label}{j}", "benchmark": "pingpong", "mpi": lib,
                         "ranks": 2, "nodes": 1})
    return comparison.Points(label, pd.DataFrame(rows), {}, len(logs), libraries={lib: lib})


def draw(rng, sd, runs, shift, common):
    mu = np.log(np.linspace(0.5, 400.0, len(SIZES)))
    own = rng.normal(0, 1, (runs, len(SIZES))) * sd * math.sqrt(1 - common)
    job = rng.normal(0, 1, (runs, 1)) * sd * math.sqrt(common)
    return mu + shift + own + job


def simulate(sd, runs, sweeps, common, rng) -> dict:
    covered = np.zeros(len(SIZES))
    false_any = found = points_slower = false_het = 0
    for shift, n in ((0.0, sweeps), (math.log(SLOWDOWN), sweeps)):
        for _ in range(n):
            a = side("A", draw(rng, sd, runs, 0.0, common))
            b = side("B", draw(rng, sd, runs, shift, common))
            cmp = comparison.compare(a, b)
            t = cmp.tests.sort_values("size")
            truth = math.exp(shift)
            covered += ((t["lo"] <= truth) & (truth <= t["hi"])).to_numpy()
            sweep = set(cmp.sweeps["verdict"]) if len(cmp.sweeps) else set()
            false_het += len(cmp.sweeps) > 0 and cmp.sweeps["groups"].iloc[0] > 1
            if shift == 0.0:
                false_any += bool(t["verdict"].isin(["slower", "faster"]).any()
                                  or sweep & {"slower", "faster"})
            else:
                found += sweep == {"slower"}
                points_slower += int((t["verdict"] == "slower").sum())
    return {"coverage": covered / (2 * sweeps), "aa_false": false_any / sweeps,
            "sweep_found": found / sweeps, "points_found": points_slower / sweeps / len(SIZES),
            "false_het": false_het / (2 * sweeps), "het_found": heterogeneous(sd, runs, sweeps,
                                                                             common, rng)}


def heterogeneous(sd, runs, sweeps, common, rng) -> float:
    """The share of sweeps, the 12 smallest sizes at x0.5 and the 11 largest at x1.10, whose
    sweep says its sizes disagree (and reports groups, never one shift)."""
    shift = np.where(np.arange(len(SIZES)) < 12, math.log(0.5), math.log(SLOWDOWN))
    said = 0
    for _ in range(sweeps):
        cmp = comparison.compare(side("A", draw(rng, sd, runs, 0.0, common)),
                                 side("B", draw(rng, sd, runs, shift, common)))
        said += len(cmp.sweeps) > 1 and (cmp.sweeps["groups"] > 1).all()
    return said / sweeps


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sweeps", type=int, default=1000, help="A/A and A/B sweeps each (1000)")
    p.add_argument("--profile", action="append", choices=("measured", "spike", "none"),
                   help="the variance profile(s) (default: both; none: only --records)")
    p.add_argument("--records", metavar="DIR", help="kept records: a campaign of K >= 5 jobs")
    p.add_argument("--runs", default="3,5", help="runs per side (3,5)")
    p.add_argument("--common", type=float, default=0.0,
                   help="share of a job's variance common to every size (0)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    profiles = {name: f() for name, f in (("measured", measured_profile), ("spike", spike_profile))
                if name in (args.profile or ["measured", "spike"])}
    if args.records:
        profiles = {f"records {args.records}": records_profile(args.records), **profiles}
    print(f"# machine: {machine()}")
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {args.sweeps} A/A and "
          f"{args.sweeps} ×{SLOWDOWN} sweeps per row; --common {args.common}; seed {args.seed}")
    rng = np.random.default_rng(args.seed)
    warnings.simplefilter("ignore", RuntimeWarning)
    for name, sd in profiles.items():
        print(f"\n## profile {name}: sd between jobs per size "
              + " ".join(f"{x:.2f}" for x in sd))
        print("| runs per side | coverage, worst size | coverage, median | A/A sweeps with a "
              "false verdict | ×1.10 found by the sweep verdict | points called slower | "
              "uniform sweeps said to disagree | ×0.5/×1.10 halves said to disagree |")
        print("|---|---|---|---|---|---|---|---|")
        for runs in map(int, args.runs.split(",")):
            t0 = time.monotonic()
            got = simulate(sd, runs, args.sweeps, args.common, rng)
            c = got["coverage"]
            worst = int(np.argmin(c))
            print(f"| {runs} against {runs} | {c[worst]:.1%} at {SIZES[worst]} B | "
                  f"{np.median(c):.1%} | {got['aa_false']:.1%} | {got['sweep_found']:.1%} | "
                  f"{got['points_found']:.1%} | {got['false_het']:.1%} | "
                  f"{got['het_found']:.1%} |", flush=True)
            print("coverage per size: " + " ".join(f"{x:.3f}" for x in c)
                  + f"  ({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
