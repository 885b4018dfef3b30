"""jostle-bench with real ranks in tests: the built binaries, the environment Open MPI needs here
(root, more ranks than cores), and one way of launching a benchmark."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILDS = {"openmpi": ROOT / "build/openmpi/jostle-bench", "mpich": ROOT / "build/mpich/jostle-bench",
          "simgrid": ROOT / "build/simgrid/jostle-bench"}
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", PYTHONPATH=str(ROOT / "python"))


def launcher(flavor="openmpi", n=2):
    """The launcher of the binary's MPI, n ranks, no launcher binding (jostle binds)."""
    if flavor == "mpich":
        return ["mpiexec.mpich", "-n", str(n)]
    return ["mpirun.openmpi", "-np", str(n), "--oversubscribe", "--bind-to", "none"]


def built(flavor="openmpi"):
    """The built jostle-bench of FLAVOR (openmpi, mpich, or simgrid: the SMPI build, with
    smpirun), or the test is skipped saying why: the one place that asks (conftest's `built`
    fixture gives it to a test)."""
    exe = BUILDS[flavor]
    if flavor == "simgrid" and not shutil.which("smpirun"):
        pytest.skip("SimGrid (smpirun) is not installed")
    if not exe.exists():
        pytest.skip(f"{exe} is not built (make build{' with smpicc' * (flavor == 'simgrid')})")
    return exe


def run_bench(benchmark, *args, out=None, n=2, flavor="openmpi", timeout=180):
    """Runs `jostle-bench BENCHMARK ARGS [--output OUT]` with n ranks; the finished process."""
    cmd = launcher(flavor, n) + [str(built(flavor)), benchmark, *args]
    if out is not None:
        cmd += ["--output", str(out)]
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=timeout)


def validate(benchmark, *args, flavor="openmpi"):
    """`jostle-bench BENCHMARK --validate ARGS`: the checks of a run's input that need no ranks,
    made before MPI starts (src/harness/driver.c), without a launch; the finished process."""
    return subprocess.run([str(built(flavor)), benchmark, "--validate", *map(str, args)],
                          env=ENV, capture_output=True, text=True, timeout=60)
