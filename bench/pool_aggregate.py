#!/usr/bin/env python3
"""Target of the contention benchmark's compute throughput with a starved thread (what
tests/c/test_pool_aggregate.c checks by counting, here in time): two threads share one core,
each sweep 5 ms of arithmetic; "together", one thread naps 4x its last sweep inside each sweep,
so the other gets the core and its sweeps get faster, though the core does no more work
(bench/ref/ref_pool_starve.c).  Medians over rounds of alternating phases:

  * aggregate together / alone <= 1.25 (the pool's aggregate, sweeps / wall time, is not
    fooled; on an idle core it reads ~1)
  * the median sweep rate x threads / aggregate: alone <= 1.25 (they agree), together >= 1.4
    (the median over sweeps overstates the starved phase, ~2 on an idle core)

Timings on a loaded machine vary from round to round: run more rounds there.
Usage: bench/pool_aggregate.py [--build build/openmpi] [--rounds 9]; exit 0 when all pass."""
import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"aggregate_ratio": ("<=", 1.25), "overstate_alone": ("<=", 1.25),
           "overstate_together": (">=", 1.4)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", type=Path, default=ROOT / "build" / "openmpi")
    ap.add_argument("--rounds", type=int, default=9)
    a = ap.parse_args()
    exe = a.build / "ref_pool_starve"
    if not exe.exists():
        sys.exit(f"pool_aggregate: {exe} is not built (make build)")
    out = subprocess.run([str(exe), str(a.rounds)], check=True, capture_output=True, text=True)
    got = {}
    for line in out.stdout.splitlines():
        print(line)
        key, _, value = line.partition(" ")
        if key in TARGETS:
            got[key] = float(value)
    ok = True
    for key, (op, bound) in TARGETS.items():
        passed = got[key] <= bound if op == "<=" else got[key] >= bound
        ok &= passed
        print(f"{key:20s} {got[key]:8.3f}  target {op} {bound}  {'PASS' if passed else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
