"""What every bench script shares: the checkout (ROOT), its virtual environment, the launcher
line of a build's MPI, a command's wall time and a count option's check.

The bench scripts import jostle, which needs numpy, pandas and matplotlib: use() re-runs
`python3 bench/X.py` with the checkout's virtual environment (made by `make venv`) when the
interpreter it was started with lacks them, and puts the checkout's package first on the path."""
import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_PY = ROOT / ".venv" / "bin" / "python"


def use():
    try:
        import numpy  # noqa: F401
    except ImportError:
        if VENV_PY.exists() and Path(sys.executable).resolve() != VENV_PY.resolve():
            os.execv(str(VENV_PY), [str(VENV_PY), *sys.argv])
        raise
    sys.path.insert(0, str(ROOT / "python"))


def launch_line(build, program, args=(), ranks=2, bind=False) -> list:
    """The command line that starts RANKS ranks of PROGRAM ARGS under the launcher of BUILD's
    MPI (build/openmpi or build/mpich), from jostle.run.launch: that MPI's own launcher (a bare
    mpirun may be the other MPI's on Debian), root allowed, ranks beyond the cores allowed.
    BIND: the launcher pins rank r to a core (a reference loop binds nothing itself)."""
    from jostle.run import launch
    flavor = "mpich" if Path(build).name == "mpich" else "openmpi"
    kind, exe = launch.choose_launcher(flavor, env={})   # never srun: these runs are local
    return launch.build_command(kind, program, list(args), ranks, exe=exe, oversubscribe=True,
                                launcher_binds=bind).argv


def machine() -> str:
    """The machine a bench script prints beside its figures: lscpu's model name, CPUs,
    hypervisor and NUMA nodes ('AMD EPYC; CPU(s): 2; …'), or Python's guess without lscpu."""
    import platform
    keep = ("Model name", "CPU(s)", "Hypervisor vendor", "NUMA node(s)")
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    found = [" ".join(ln.split()) for ln in out.splitlines() if ln.split(":")[0] in keep]
    return "; ".join(found) or f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"


def timed(cmd) -> float:
    """Seconds of wall time CMD takes to run to its end (an error if it fails): launch and
    MPI_Init included, as a user waits for them."""
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return time.monotonic() - t0


def at_least_one(text) -> int:
    """An argparse type: a whole number >= 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number >= 1")
    return n
