#!/usr/bin/env python3
"""jostle's copy and triad kernels against likwid-bench's, alternating in one run.

Each round runs, for every pair below and for 1 thread and all cores, jostle's kernel and then
likwid-bench's (the order flips every round, so a drift of the machine's load hits both sides),
on arrays of the same total size, and compares their bandwidths in the same counting convention:
bytes the kernel reads and writes, without the write-allocate reads of normal stores (STREAM's
and likwid-bench's convention).

jostle's side is the product path: `jostle-bench contention --phases compute --compute-on sender
--oversubscribe` (two ranks, the compute threads on rank 0), its `compute_throughput` (bytes of
all compute threads / the phase's wall time, as likwid-bench divides its data volume by its run
time).  The communicating threads of both ranks share cores with the compute threads, so the
1-thread rows also check that they sleep during the compute phase (target >= 0.95), besides
the parity of the kernels themselves (target >= 0.98 for every pair).

Pairs (vector width: jostle's AVX2 path where the CPU has AVX2, which likwid's *_avx kernels
match; jostle has no AVX-512 path, so on an AVX-512 CPU it is still compared with *_avx):

    jostle copy,  --stores normal   likwid-bench copy_avx             b = a, 16 B/element
    jostle copy,  --stores nt       likwid-bench copy_mem_avx         (non-temporal stores)
    jostle triad, --stores normal   likwid-bench stream_avx_fma       a = b*s + c, 24 B/element
    jostle triad, --stores nt       likwid-bench stream_mem_avx_fma   (non-temporal stores)

The ratio of a pair is the median over rounds of jostle/likwid within a round; the best of
rounds of each side and their ratio are printed beside it (launches on a shared VM are
bimodal: a round can land both sides in different modes).

Each side of a round is the median of --runs (3) timed seconds: jostle's compute phases of a
second in one launch (--repeat), likwid-bench's runs of `-s 1`: the same exposure to the drift
of a shared machine on both sides.

Usage: bench/kernel_parity.py [--build build/openmpi] [--rounds 5] [--runs 3] [--bytes 384M]
                              [--threads 1,2]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import checkout_venv

checkout_venv.use()
ROOT = checkout_venv.ROOT
from jostle.records.results import load_run  # noqa: E402

PAIRS = [("copy", "normal", "copy_avx"), ("copy", "nt", "copy_mem_avx"),
         ("triad", "normal", "stream_avx_fma"), ("triad", "nt", "stream_mem_avx_fma")]


def jostle(build, kernel, stores, threads, total, runs):
    """(STREAM-counted GB/s, traffic GB/s with write-allocate): the median of `runs` compute
    phases of at least a second each, in one launch."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "k.jsonl")
        subprocess.run(checkout_venv.launch_line(build, os.path.join(build, "jostle-bench"), [
            "contention", "--phases", "compute",
            "--compute-on", "sender", "--compute-cores", str(threads), "--oversubscribe",
            "--kernel", kernel, "--stores", stores, "--array-bytes", str(total // threads),
            "--phase-time", "1", "--repeat", str(runs), "--quiet", "--output", out]),
            check=True, capture_output=True, text=True)
        pts = load_run(out).points
    got = {}  # metric -> one value per phase
    for metric, median in zip(pts.metric, pts["median"]):
        got.setdefault(metric, []).append(median)
    return (statistics.median(got["compute_throughput"]),
            statistics.median(got["compute_traffic"]))


def likwid(test, threads, total, runs):
    """GB/s: the median of `runs` likwid-bench runs of at least a second each (-s 1), the same
    exposure to the machine's drift as jostle's phases."""
    got = []
    for _ in range(runs):
        out = subprocess.run(["likwid-bench", "-t", test, "-s", "1",
                              "-w", f"S0:{total // 1000}kB:{threads}"],
                             check=True, capture_output=True, text=True).stdout
        got.append(float(re.search(r"MByte/s:\s+([0-9.]+)", out).group(1)) / 1e3)
    return statistics.median(got)


def comm_cpu(build, seconds=6.0):
    """CPU share of each rank's communicating (main) thread over the middle of a long compute
    phase, from /proc: near 0 when it sleeps, near 1 when it spins in MPI."""
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.Popen(checkout_venv.launch_line(build, os.path.join(build, "jostle-bench"), [
            "contention", "--phases", "compute",
            "--compute-on", "sender", "--compute-cores", "1", "--oversubscribe",
            "--array-bytes", "96M", "--phase-time", str(seconds), "--max-time", str(seconds),
            "--quiet", "--output", os.path.join(d, "c.jsonl")]),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(seconds / 2)
        pids = subprocess.run(["pgrep", "-P", str(p.pid), "jostle-bench"], capture_output=True,
                              text=True).stdout.split()
        ticks = lambda: [sum(map(int, open(f"/proc/{q}/task/{q}/stat").read().rsplit(")", 1)[1].split()[11:13]))
                         for q in pids]
        t0, c0 = time.time(), ticks()
        time.sleep(seconds / 4)
        t1, c1 = time.time(), ticks()
        p.wait()
    hz = os.sysconf("SC_CLK_TCK")
    return [(b - a) / hz / (t1 - t0) for a, b in zip(c0, c1)]


def loadavg():
    return open("/proc/loadavg").read().split()[:3]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=str(ROOT / "build" / "openmpi"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3,
                    help="timed seconds per side and round: jostle's phases, likwid-bench's runs")
    ap.add_argument("--bytes", default="384M", help="arrays in all, per side (M = 10^6)")
    ap.add_argument("--threads", default=f"1,{os.cpu_count()}")
    a = ap.parse_args()
    if not shutil.which("likwid-bench"):
        sys.exit("likwid-bench not found: scripts/install-deps.sh installs Debian's likwid")
    total = int(a.bytes.rstrip("M")) * 10**6
    threads = [int(t) for t in a.threads.split(",")]
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    print(f"# CPU {cpu}, {os.cpu_count()} cores; arrays {total / 1e6:.0f} MB in all per side; "
          f"{a.rounds} rounds; load average before {' '.join(loadavg())}")

    res = {}  # (pair, threads) -> [(jostle, traffic, likwid)]
    for r in range(a.rounds):
        for pair in PAIRS:
            for t in threads:
                kernel, stores, test = pair
                if r % 2 == 0:
                    j = jostle(a.build, kernel, stores, t, total, a.runs)
                    lk = likwid(test, t, total, a.runs)
                else:
                    lk = likwid(test, t, total, a.runs)
                    j = jostle(a.build, kernel, stores, t, total, a.runs)
                res.setdefault((pair, t), []).append((j[0], j[1], lk))
        print(f"# round {r + 1} done, load average {' '.join(loadavg())}", file=sys.stderr)

    print(f"\n{'jostle kernel':<22}{'likwid-bench':<20}{'thr':>4}{'jostle':>8}{'traffic':>9}"
          f"{'likwid':>8}{'ratio':>7}{'best/best':>10}  rounds (jostle/likwid)")
    ok = True
    for (pair, t), v in res.items():
        kernel, stores, test = pair
        ratios = [j / lk for j, _, lk in v]
        q = statistics.median(ratios)
        qb = max(j for j, _, _ in v) / max(lk for _, _, lk in v)
        ok &= q >= 0.98
        print(f"{kernel + ' --stores ' + stores:<22}{test:<20}{t:>4}"
              f"{statistics.median(j for j, _, _ in v):>8.2f}"
              f"{statistics.median(w for _, w, _ in v):>9.2f}"
              f"{statistics.median(lk for _, _, lk in v):>8.2f}{q:>7.3f}{qb:>10.3f}  "
              + " ".join(f"{x:.2f}" for x in ratios))
    print("\nGB/s: STREAM/likwid counting (no write-allocate); traffic = jostle's with the "
          "write-allocate reads of normal stores (= the same with nt)")
    one = [statistics.median(j / lk for j, _, lk in v) for (p, t), v in res.items() if t == 1]
    print(f"every pair >= 0.98 of likwid-bench: {'PASS' if ok else 'FAIL'}")
    if one:
        print(f"1 compute thread, --compute-on sender --oversubscribe (comm threads asleep), "
              f">= 0.95: {'PASS' if min(one) >= 0.95 else 'FAIL'} (lowest {min(one):.3f})")
    share = comm_cpu(a.build)
    print("communicating threads during a compute phase (/proc, 1 compute thread): "
          + ", ".join(f"rank {r} {x:.1%} of a core" for r, x in enumerate(share))
          + f" (asleep: < 5%; spinning would be ~100%): {'PASS' if share and max(share) < 0.05 else 'FAIL'}")
    print(f"# load average after {' '.join(loadavg())}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
