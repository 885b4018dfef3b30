#!/usr/bin/env python3
"""Parity of `jostle-bench pingpong --pairs N` and `--comm-threads T` with osu_mbw_mr and
osu_latency_mt, measured side by side in the same MPI jobs (issue 27).

bench/ref/ref_mbw.c alternates, size by size and inside each of --jobs MPI jobs, a reference
loop written to the documented method of osu_mbw_mr (every power of two 1 B - 4 MiB: aggregate
bandwidth in MB/s and the message rate, 1e6 x bandwidth / size) or of osu_latency_mt (latency
of T threads per rank) and jostle's own flows (comm/flows.h, what `jostle-bench pingpong
--pairs N` / `--comm-threads T` run).  Printed per size: the reference and jostle per round and
the median over rounds of jostle / reference.  Targets, [0.97, 1.03] at every size: 1 pair
(bandwidth and message rate) and 1 thread.  Runs with more ranks or threads than this machine
has cores are marked OVERSUBSCRIBED: numbers printed, no target.

The ranks are started by jostle.launch (the launcher and flags `jostle` itself uses).

Usage: bench/osu_pairs_parity.py [--build build/openmpi] [--rounds 6] [--jobs 2]
                                 [--pairs 1,2] [--threads 1,2]
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkout_venv  # noqa: E402  (re-runs this script with the checkout's venv if needed)

checkout_venv.use()
ROOT = checkout_venv.ROOT

from jostle import launch  # noqa: E402
from osu_parity import at_least_one  # noqa: E402

SIZES = [1 << k for k in range(23)]  # 1 B .. 4 MiB


def counts(text):
    try:
        vals = [int(v) for v in text.split(",")]
    except ValueError:
        vals = []
    if not vals or min(vals) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of whole numbers >= 1")
    return vals


def measure(build, kind, ranks, args, rounds, jobs):
    """size -> [(ref, jostle) per round], the rounds spread over JOBS jobs (each job draws
    its buffers' pages afresh: see osu_parity.py)."""
    got = {}
    for j in range(jobs):
        n = rounds // jobs + (j < rounds % jobs)
        if n == 0:
            continue
        argv = checkout_venv.launch_line(build, os.path.join(build, "ref_mbw"),
                                         [kind, *args, str(n), *map(str, SIZES)], ranks)
        out = subprocess.run(argv, check=True, capture_output=True, text=True,
                             timeout=1800).stdout
        for line in out.splitlines():
            _, size, r, jv = line.split()
            got.setdefault(int(size), []).append((float(r), float(jv)))
    return got


def table(title, unit, got, target, rate=False):
    """Prints one table; returns the sizes outside the target (none when no target)."""
    rounds = len(next(iter(got.values())))
    head = "".join(f"{'r' + str(k) + ' ref':>12}{'jostle':>12}" for k in range(rounds))
    print(f"\n## {title} ({unit}){'' if target else '  OVERSUBSCRIBED: no target'}")
    print(f"{'size':>8}{head}{'median j/r':>11}")
    bad = []
    for size in SIZES:
        rows = got[size]
        conv = (lambda v: 1e6 * v / size) if rate else (lambda v: v)
        line = f"{size:>8}" + "".join(f"{conv(r):>12.5g}{conv(j):>12.5g}" for r, j in rows)
        m = statistics.median(j / r for r, j in rows)
        ok = 0.97 <= m <= 1.03
        if target and not ok:
            bad.append(size)
        print(f"{line}{m:>11.3f}{'  *' if target and not ok else ''}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=str(ROOT / "build" / "openmpi"))
    ap.add_argument("--rounds", type=at_least_one, default=6, help="rounds in all (default 6)")
    ap.add_argument("--jobs", type=at_least_one, default=2, help="MPI jobs (default 2)")
    ap.add_argument("--pairs", type=counts, default=[1, 2], help="pair counts (default 1,2)")
    ap.add_argument("--threads", type=counts, default=[1, 2], help="thread counts (default 1,2)")
    a = ap.parse_args()
    cores = launch.host_cores()
    load = os.getloadavg()
    print(f"# {a.build}: {a.rounds} rounds over {a.jobs} MPI jobs per configuration, the "
          f"reference and jostle alternating size by size; {cores} cores; load average at "
          f"start {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    verdicts = []
    for p in a.pairs:
        over = 2 * p > cores
        got = measure(a.build, "mbw", 2 * p, [], a.rounds, a.jobs)
        name = f"osu_mbw_mr method, {p} pair(s), {2 * p} ranks"
        bad = table(name + ": aggregate bandwidth", "MB/s", got, p == 1 and not over)
        bad_r = table(name + ": message rate", "messages/s", got, p == 1 and not over, rate=True)
        if p == 1 and not over:
            verdicts.append(("1 pair bandwidth", bad))
            verdicts.append(("1 pair message rate", bad_r))
    for t in a.threads:
        over = 2 * t > cores
        got = measure(a.build, "latmt", 2, [str(t)], a.rounds, a.jobs)
        bad = table(f"osu_latency_mt method, {t} thread(s) per rank, 2 ranks: latency", "us",
                    got, t == 1 and not over)
        if t == 1 and not over:
            verdicts.append(("1 thread latency", bad))
    load = os.getloadavg()
    print(f"\nload average at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    for name, bad in verdicts:
        print(f"{name:<22} target [0.97, 1.03] on the median over rounds: "
              f"{'PASS' if not bad else 'FAIL at ' + ', '.join(map(str, bad))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
