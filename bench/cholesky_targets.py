#!/usr/bin/env python3
"""Targets of the cholesky benchmark, in one run; every ratio printed with
PASS or FAIL:

  * 2 ranks here, N 4096, tile 512, one worker per rank, one BLAS thread: jostle's dbcast mode
    over StarPU-MPI's mpi_cholesky (Debian's starpu-examples) >= 1.0, as the median of
    --rounds rounds, each one jostle run (its median factorization) then one mpi_cholesky
    launch (`jostle cholesky --starpu --starpu-reps 1`), alternating in this session.
    mpi_cholesky computes in float (sgemm, ssyrk, strsm, POTRF as sscal + ssyr per column),
    so jostle runs --datatype float (the same arithmetic); --datatype double prints the ratio
    of jostle's double against StarPU's float, which is not like for like.
  * simulated 4 to 256 nodes (`jostle cholesky --simulate`, all three modes): dbcast /
    flat-ordered >= 1.0 at every node count; the figure of the sweep is written beside the
    campaigns (cholesky-gain-<N>-<tile>.png);
  * the simulated sweep takes < 600 s of real time (its node counts side by side, --jobs,
    default this machine's cores: each SimGrid run is single-threaded).

Exit status 0 when every target passes, 1 otherwise."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import checkout_venv

checkout_venv.use()
ROOT = checkout_venv.ROOT
from jostle import figures  # noqa: E402
from jostle.figures import cholesky as chol_fig  # noqa: E402
from jostle.records.results import load_run  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "OMPI_ALLOW_RUN_AS_ROOT": "1",
       "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def real_rounds(a, cli, out) -> list:
    """The alternating rounds: a list of ok flags (printed as it goes)."""
    jostle, ref, residuals = [], [], []
    print(f"N = {a.n}, tile = {a.tile}, 2 ranks (Open MPI), one worker per rank, "
          f"OPENBLAS_NUM_THREADS=1, jostle --datatype {a.datatype}, StarPU-MPI float")
    print(f"{'round':>5} {'load':>5} {'jostle dbcast':>14} {'StarPU-MPI':>11} {'ratio':>7}")
    for i in range(a.rounds):
        name = f"round-{i + 1}"
        load = os.getloadavg()[0]
        run = cli + ["--ranks", "2", "--n", str(a.n), "--tile", str(a.tile), "--workers", "1",
                     "--modes", "dbcast", "--datatype", a.datatype, "--mpi", "openmpi",
                     "--campaign", "real", "--name", name, "--starpu", "--starpu-reps", "1"]
        if a.bench:
            run += ["--bench", a.bench]
        if subprocess.run(run, env=ENV).returncode:
            print(f"FAIL  round {i + 1}: jostle cholesky --starpu did not run")
            return [False]
        r = load_run(out / "real" / f"{name}.jsonl").points
        g = float(r[(r["metric"] == "gflops") & (r["mode"] == "dbcast")]["median"].iloc[0])
        residuals.append(float(r[r["metric"] == "residual"]["median"].max()))
        sp = float(load_run(out / "real" / f"{name}-starpu.jsonl").points.iloc[0]["median"])
        jostle.append(g)
        ref.append(sp)
        print(f"{i + 1:>5} {load:>5.2f} {g:>14.2f} {sp:>11.2f} {g / sp:>7.3f}")
    mj, ms = statistics.median(jostle), statistics.median(ref)
    print(f"{'median':>11} {mj:>14.2f} {ms:>11.2f}   (GFlop/s; residual at most "
          f"{max(residuals):.2e})")
    note = "" if a.datatype == "float" else " (double against StarPU's float: not like for like)"
    ok = mj / ms >= 1.0
    print(f"{verdict(ok)}  jostle dbcast / StarPU-MPI = {mj / ms:.3f} (target >= 1.0, medians "
          f"of {a.rounds} alternating rounds){note}")
    return [ok]


def simulated(a, cli, out) -> list:
    sim = cli + ["--simulate", "--nodes", a.nodes, "--modes", "flat,flat-ordered,dbcast",
                 "--campaign", "sim", "--jobs", str(a.jobs)]
    if a.sim_bench:
        sim += ["--bench", a.sim_bench]
    t0 = time.monotonic()
    rc = subprocess.run(sim, env=ENV).returncode
    wall = time.monotonic() - t0
    oks = []
    runs = [load_run(p) for p in sorted((out / "sim").glob("cholesky-sim-*.jsonl"))]
    rows = chol_fig._gains(chol_fig._frame(runs))
    if rows:
        print(f"simulated ({rows[0]['platform']}), N = {rows[0]['n']}, tile = {rows[0]['tile']}, "
              f"one rank per node, dbcast routing {rows[0]['routing']}")
        print(f"{'nodes':>5} {'grid':>6} {'flat':>9} {'flat-ord':>9} {'dbcast':>9}  "
              "dbcast/flat-ordered")
    for p in rows:
        ok = p["vs_ordered"] >= 1.0
        oks.append(ok)
        print(f"{p['nodes']:>5} {p['grid']:>6} {p['flat']:>9.0f} {p['flat-ordered']:>9.0f} "
              f"{p['dbcast']:>9.0f}  {verdict(ok)}  {p['vs_ordered']:.3f} (target >= 1.0)")
    if runs:
        paths = figures.write(chol_fig.build(runs), out, ("png",))
        print("figure: " + ", ".join(str(p) for p in paths if "gain" in p.name))
    oks.append(rc == 0 and wall < 600 and bool(rows))
    print(f"{verdict(oks[-1])}  simulated sweep {a.nodes}, {a.jobs} run(s) side by side: "
          f"{wall:.0f} s real time (target < 600)"
          f"{'' if rc == 0 else f', exit {rc}'}")
    return oks


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--tile", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    ap.add_argument("--datatype", choices=("float", "double"), default="float",
                    help="jostle's arithmetic (default float, as mpi_cholesky)")
    ap.add_argument("--bench", help="jostle-bench (default: build/openmpi)")
    ap.add_argument("--sim-bench", help="SimGrid jostle-bench (default: build/simgrid)")
    ap.add_argument("--nodes", default="4:256")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="simulated runs side by side (default: this machine's cores)")
    ap.add_argument("--keep", metavar="DIR", help="write the campaigns here and keep them")
    ap.add_argument("--skip-real", action="store_true")
    ap.add_argument("--skip-sim", action="store_true")
    a = ap.parse_args()
    out = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="jostle-chol-targets-"))
    cli = [sys.executable, "-m", "jostle.cli", "cholesky", "--output-dir", str(out), "--quiet"]
    ok = []
    if not a.skip_real:
        ok += real_rounds(a, cli, out)
    if not a.skip_sim:
        ok += simulated(a, cli, out)
    print(f"campaigns: {out}")
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
