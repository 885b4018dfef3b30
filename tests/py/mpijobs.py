"""jostle-bench with real ranks in tests: the built binaries, the environment Open MPI needs here
(root, more ranks than cores), and one way of launching a benchmark."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILDS = {"openmpi": ROOT / "build/openmpi/jostle-bench", "mpich": ROOT / "build/mpich/jostle-bench"}
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", PYTHONPATH=str(ROOT / "python"))


def launcher(flavor="openmpi", n=2):
    """The launcher of the binary's MPI, n ranks, no launcher binding (jostle binds)."""
    if flavor == "mpich":
        return ["mpiexec.mpich", "-n", str(n)]
    return ["mpirun.openmpi", "-np", str(n), "--oversubscribe", "--bind-to", "none"]


def bench_exe(flavor="openmpi"):
    """The built jostle-bench, or the test is skipped with the reason."""
    exe = BUILDS[flavor]
    if not exe.exists():
        pytest.skip(f"{exe} is not built (make build)")
    return str(exe)


def run_bench(benchmark, *args, out=None, n=2, flavor="openmpi", timeout=180):
    """Runs `jostle-bench BENCHMARK ARGS [--output OUT]` with n ranks; the finished process."""
    cmd = launcher(flavor, n) + [bench_exe(flavor), benchmark, *args]
    if out is not None:
        cmd += ["--output", str(out)]
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=timeout)
