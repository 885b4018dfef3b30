#!/usr/bin/env python3
"""Targets of the bcast benchmark (issue #6), in one run:

  * at 256 simulated nodes, 1 MiB to every other node: auto / MPI_Bcast <= 1.15
  * same point: flat / auto >= 10 (the automatic choice at least 10x faster than flat sends)
  * the 4-to-256-node simulated sweep takes under 300 s of real time here

Runs `jostle bcast --simulate --nodes 4:256 --sizes 1M` into a fresh campaign (a temporary
directory unless --keep DIR) and prints the numbers side by side with PASS/FAIL.
Exit status 0 when every target passes, 1 otherwise."""
import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from jostle.results import load_run  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", metavar="DIR", help="write the campaign here and keep it")
    ap.add_argument("--nodes", default="4:256")
    ap.add_argument("--routing", default="flat,binomial,pipeline-chain,pipeline-tree,auto,mpi_bcast")
    ap.add_argument("--bench", metavar="PATH",
                    help="SimGrid build of jostle-bench (default build/simgrid/jostle-bench)")
    a = ap.parse_args()
    out = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="jostle-bcast-targets-"))
    cmd = [sys.executable, "-m", "jostle.cli", "bcast", "--simulate", "--nodes", a.nodes,
           "--sizes", "1M", "--routing", a.routing, "--output-dir", str(out),
           "--campaign", "targets", "--quiet"] + (["--bench", a.bench] if a.bench else [])
    t0 = time.monotonic()
    p = subprocess.run(cmd, env={**__import__("os").environ, "PYTHONPATH": str(ROOT / "python")})
    wall = time.monotonic() - t0
    if p.returncode:
        print(f"the simulated sweep failed (exit {p.returncode})")
        return 1
    runs = sorted((out / "targets").glob("bcast-sim-*.jsonl"),
                  key=lambda f: int(f.stem.rsplit("-", 1)[1]))
    print(f"{'nodes':>6} {'auto':>12} {'chose':>14} {'MPI_Bcast':>12} {'flat':>12} "
          f"{'auto/MPI':>9} {'flat/auto':>9}   (simulated ms, 1 MiB to all)")
    last = None
    for f in runs:
        r = load_run(f)
        t = r.points[r.points["metric"] == "time"].set_index("routing")
        med = t["median"] / 1e3
        auto, mpi, flat = med.get("auto"), med.get("mpi_bcast"), med.get("flat")
        chose = t.loc["auto", "chosen"] if "auto" in t.index else "?"
        print(f"{r.meta['mpi']['ranks']:>6} {auto:>12.3f} {chose:>14} {mpi:>12.3f} {flat:>12.3f} "
              f"{auto / mpi:>9.3f} {flat / auto:>9.1f}")
        last = (r.meta["mpi"]["ranks"], auto, mpi, flat)
    n, auto, mpi, flat = last
    ok = []
    for label, val, good, target in (
            (f"auto / MPI_Bcast at {n} nodes", auto / mpi, auto / mpi <= 1.15, "<= 1.15"),
            (f"flat / auto at {n} nodes", flat / auto, flat / auto >= 10, ">= 10"),
            ("real time of the sweep (s)", wall, wall < 300, "< 300")):
        ok.append(good)
        print(f"{'PASS' if good else 'FAIL'}  {label}: {val:.3f} (target {target})")
    print(f"campaign: {out / 'targets'}")
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
