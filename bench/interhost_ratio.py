#!/usr/bin/env python3
"""Target of the inter-host ping-pong on one machine (scripts/netns-hosts.sh, docs/interhost.md),
printed with PASS or FAIL: a 4-byte round trip between two network namespaces (TCP through two
network stacks and a veth pair) takes at least twice as long as the same ping-pong on this host
by shared memory (seen: 7-15 µs against 0.15-0.5 µs on a 2-core VM).

The two sweeps alternate, --rounds times (default 3), so that a change of load falls on both;
each round prints the 4-byte latency and the 1 MiB bandwidth of both, side by side, and their
ratio; the target is judged on the medians of the rounds. Needs root (namespaces), Open MPI and
build/openmpi. (tests/py/test_interhost.py checks what the runs record, never their speed.)
Exit status 0 when the target passes, 1 when it fails, 2 when it cannot be measured here."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import checkout_venv

ROOT = checkout_venv.ROOT
SCRIPT = ROOT / "scripts" / "netns-hosts.sh"
BENCH = ROOT / "build" / "openmpi" / "jostle-bench"
SWEEP = ["pingpong", "--sizes", "4,64K,1M", "--min-reps", "20", "--max-time", "0.5",
         "--comm-core", "0,1"]   # each rank alone on its "host": one core each, as on two hosts
ROOT_OK = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
TAG = str(os.getpid() % 100000)
ENV = {**os.environ, **ROOT_OK, "JOSTLE_NETNS_A": f"jbA{TAG}", "JOSTLE_NETNS_B": f"jbB{TAG}",
       "JOSTLE_NETNS_TMP": f"/tmp/jostle-netns-bench-{TAG}"}


def medians(path: Path) -> dict:
    pts = [json.loads(x) for x in path.read_text().splitlines()[1:-1]]
    return {(p["params"]["size"], p["metric"]): p["median"] for p in pts}


def inter(out: Path) -> dict:
    subprocess.run([str(SCRIPT), "mpirun", str(BENCH), *SWEEP, "--output", str(out)], env=ENV,
                   check=True, capture_output=True, timeout=300)
    return medians(out)


def intra(out: Path) -> dict:
    # spinning, not yielding: a yielding rank on a loaded machine waits a time slice per message
    subprocess.run([shutil.which("mpirun.openmpi") or "mpirun", "--allow-run-as-root", "-np", "2",
                    "--bind-to", "none", str(BENCH), *SWEEP, "--output", str(out)],
                   env={**os.environ, **ROOT_OK, "OMPI_MCA_mpi_yield_when_idle": "0"},
                   check=True, capture_output=True, timeout=300)
    return medians(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="alternations of the two sweeps [3]")
    ap.add_argument("--factor", type=float, default=2.0,
                    help="the inter-host 4 B latency must exceed FACTOR x the intra-host one [2]")
    args = ap.parse_args()
    if os.geteuid() != 0 or not BENCH.exists() or not shutil.which("mpirun.openmpi"):
        print("cannot measure here: needs root, Open MPI and build/openmpi (make build)")
        return 2
    probe = subprocess.run([str(SCRIPT), "check"], env=ENV, capture_output=True, text=True)
    if probe.returncode:
        print(f"cannot measure here: {probe.stdout.strip() or probe.stderr.strip()}")
        return 2
    subprocess.run([str(SCRIPT), "up"], env=ENV, check=True, capture_output=True)
    lat_ratio = []
    try:
        with tempfile.TemporaryDirectory(prefix="jostle-interhost-") as d:
            print(f"{'round':>5} {'4 B latency us: inter':>22} {'intra':>7} {'ratio':>7}   "
                  f"{'1 MiB MB/s: inter':>18} {'intra':>8}")
            for k in range(args.rounds):
                a = inter(Path(d) / f"inter{k}.jsonl")
                b = intra(Path(d) / f"intra{k}.jsonl")
                la, lb = a[4, "latency"], b[4, "latency"]
                lat_ratio.append(la / lb)
                print(f"{k + 1:>5} {la:>22.2f} {lb:>7.2f} {la / lb:>7.1f}   "
                      f"{a[1 << 20, 'bandwidth']:>18.0f} {b[1 << 20, 'bandwidth']:>8.0f}")
    finally:
        subprocess.run([str(SCRIPT), "down"], env=ENV, capture_output=True)
        shutil.rmtree(ENV["JOSTLE_NETNS_TMP"], ignore_errors=True)
    ratio = statistics.median(lat_ratio)
    ok = ratio > args.factor
    print(f"{'PASS' if ok else 'FAIL'} inter-host 4 B latency / intra-host: {ratio:.1f} "
          f"(median of {args.rounds} rounds; target > {args.factor:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
