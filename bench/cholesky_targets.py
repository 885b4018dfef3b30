#!/usr/bin/env python3
"""Targets of the cholesky benchmark (issue #7), in one run:

  * 2 ranks here: jostle's distributed Cholesky reaches >= 80% of the GFlop/s of StarPU-MPI's
    mpi_cholesky (Debian's starpu-examples) on the same N and tile size, run side by side.
    Both get one compute thread per rank and one BLAS thread per kernel (STARPU_NCPU=1,
    OPENBLAS_NUM_THREADS=1: with OpenBLAS's own threads StarPU drops to ~3 GFlop/s here);
    StarPU's figure is the median of --starpu-reps runs of its "Synthetic GFlops" line, run
    and recorded by `jostle cholesky --starpu` (jostle.starpu).
  * the simulated 4-to-256-node sweep (`jostle cholesky --simulate`) takes < 600 s real time.

Exit status 0 when every target passes, 1 otherwise."""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from jostle.results import load_run  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "OMPI_ALLOW_RUN_AS_ROOT": "1",
       "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--tile", type=int, default=512)
    ap.add_argument("--starpu-reps", type=int, default=3)
    ap.add_argument("--bench", help="jostle-bench (default: build/openmpi)")
    ap.add_argument("--sim-bench", help="SimGrid jostle-bench (default: build/simgrid)")
    ap.add_argument("--nodes", default="4:256")
    ap.add_argument("--keep", metavar="DIR", help="write the campaigns here and keep them")
    ap.add_argument("--skip-sim", action="store_true")
    a = ap.parse_args()
    out = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="jostle-chol-targets-"))
    cli = [sys.executable, "-m", "jostle.cli", "cholesky", "--output-dir", str(out), "--quiet"]
    run = cli + ["--ranks", "2", "--n", str(a.n), "--tile", str(a.tile), "--workers", "1",
                 "--mpi", "openmpi", "--campaign", "real", "--name", "real", "--starpu",
                 "--starpu-reps", str(a.starpu_reps)]
    if a.bench:
        run += ["--bench", a.bench]
    if subprocess.run(run, env=ENV).returncode:
        print("FAIL  jostle cholesky --starpu did not run")
        return 1
    r = load_run(out / "real" / "real.jsonl")
    g = r.points[r.points["metric"] == "gflops"].set_index("mode")["median"]
    res = r.points[r.points["metric"] == "residual"]["median"].max()
    ref = load_run(out / "real" / "real-starpu.jsonl").points.iloc[0]
    sp = float(ref["median"])
    best = g.max()
    print(f"N = {a.n}, tile = {a.tile}, 2 ranks (Open MPI), one compute thread per rank")
    print(f"  jostle flat   {g.get('flat', float('nan')):8.2f} GFlop/s")
    print(f"  jostle dbcast {g.get('dbcast', float('nan')):8.2f} GFlop/s   residual {res:.2e}")
    print(f"  StarPU-MPI    {sp:8.2f} GFlop/s   (median of {a.starpu_reps} mpi_cholesky runs)")
    ok = [best / sp >= 0.8 and res < 1e-12]
    print(f"{'PASS' if ok[0] else 'FAIL'}  jostle / StarPU = {best / sp:.3f} (target >= 0.8)")
    if not a.skip_sim:
        sim = cli + ["--simulate", "--nodes", a.nodes, "--campaign", "sim"]
        if a.sim_bench:
            sim += ["--bench", a.sim_bench]
        t0 = time.monotonic()
        rc = subprocess.run(sim, env=ENV).returncode
        wall = time.monotonic() - t0
        ok.append(rc == 0 and wall < 600)
        print(f"{'PASS' if ok[-1] else 'FAIL'}  simulated sweep {a.nodes}: {wall:.0f} s real "
              f"time (target < 600){'' if rc == 0 else f', exit {rc}'}")
    print(f"campaigns: {out}")
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
