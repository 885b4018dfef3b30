#!/usr/bin/env python3
"""The memory latency check's noise from launch to launch, its chain on the system's pages and
on huge pages, side by side (docs/check.md, "The checks"): --launches K launches of each,
alternated, exactly as `jostle check --budget B` runs its memlat step (studies.check.plan).
Prints each launch's latency, its chain's size and how much of it the kernel put on huge pages, then per
kind the median, the spread (sd of the logs), min-max, and the tolerance a one-node reference
of its first 5 launches would get (check_reference.derive: refused over 50%).

Usage: bench/memlat_pages.py [--launches 10] [--budget 8]"""
import argparse
import datetime
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import checkout_venv
from checkout_venv import ROOT, at_least_one, launch_line, machine

checkout_venv.use()

from jostle.analysis import check, check_reference  # noqa: E402
from jostle.records import lines  # noqa: E402
from jostle.studies import check as check_runs  # noqa: E402

BUILD = ROOT / "build" / "openmpi"


def one(args, out: Path) -> tuple:
    """(latency ns, fraction of the chain on huge pages, chain MiB) of one launch of memlat
    ARGS (the chain cut to what its --setup-time builds)."""
    cmd = launch_line(BUILD, str(BUILD / "jostle-bench"), ["memlat", *args, "--output", str(out),
                                                           "--quiet"], ranks=1)
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120)
    run = lines.read(out)        # judged as every record jostle reads
    chain = run.meta["chain"]
    [lat] = [r["median"] for r in run.rows if r["metric"] == "latency"]
    return lat, (chain["huge_bytes"] / chain["bytes"] if chain.get("huge_bytes", -1) >= 0
                 else math.nan), chain["bytes"] >> 20


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--launches", type=at_least_one, default=10)
    ap.add_argument("--budget", type=float, default=8.0)
    a = ap.parse_args()
    if not (BUILD / "jostle-bench").exists():
        print(f"SKIP: {BUILD}/jostle-bench is not built (make build)")
        return 2
    kinds = ("system", "huge")
    argv = {k: next(r.args for r in check_runs.plan(
        check.MEASURED, a.budget, "here", check.RunOptions(chain_pages=k))
        if r.benchmark == "memlat") for k in kinds}
    print(f"memory latency check, --budget {a.budget:g}, {a.launches} launches of each, "
          f"alternated; {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"on {machine()}\n  memlat {' '.join(argv['huge'])}")
    got = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.launches):
            row = []
            for k in kinds:
                lat, huge, mib = one(argv[k], Path(tmp) / f"{k}{i}.jsonl")
                got[k].append(lat)
                row.append(f"{k} {lat:7.1f} ns ({mib} MiB, {huge:4.0%} huge)")
            print(f"  launch {i + 1:2d}: " + ", ".join(row), flush=True)
    print("kind     median    spread (sd of logs)  min-max          one node, 5 checks")
    for k in kinds:
        v = got[k]
        logs = [math.log(x) for x in v]
        sd = statistics.stdev(logs) if len(v) > 1 else math.nan
        ref = check_reference.derive({"here": v[:5]}, +1) if len(v) >= 2 else None
        tol = (f"tolerance {ref['tolerance']:.0%}"
               + (" (refused)" if ref["tolerance"] > check_reference.MAX_TOLERANCE else "")
               if ref else "")
        print(f"{k:8s} {statistics.median(v):6.1f} ns {sd:8.1%}            "
              f"{min(v):6.1f}-{max(v):6.1f} ns  {tol}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
