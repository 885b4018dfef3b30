"""Shared fixtures: the hand-made run files in data/ and a fake jostle-bench."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
FAKE_BENCH = HERE / "fake_bench.py"
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "python"))  # usable without `pip install -e` too
# `make test` runs twice as many workers as cores, each launching ranks: the machine is
# oversubscribed by design, and an Open MPI rank that spins out its time slice while its partner
# waits for a core costs both (a third of the wall time and of the CPU of the MPI test files,
# measured side by side). Idle ranks yield, as Open MPI makes them when it knows a node is
# oversubscribed; a test that needs otherwise sets its own.
os.environ.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")


@pytest.fixture
def data():
    return DATA


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler, as jostle started from a terminal has it: a suite run in the
    background (`cmd &` in a script) inherits SIGINT ignored, and Python leaves it ignored."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def run_cli(capsys, *argv):
    """`jostle ARGV…` in this process: (exit status, stdout, stderr)."""
    from jostle.cli import main
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:  # argparse's own errors
        rc = e.code
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture
def jostle_cli(capsys, monkeypatch):
    """`jostle ARGV…` in this process, given back as subprocess.run gives `python -m jostle.cli`
    (returncode, stdout, stderr), with ENV's variables set: a new Python costs ~2 s of CPU
    (pandas, matplotlib), which a suite of a few hundred calls pays on 2 cores."""
    def run(*argv, env=None):
        for k, v in (env or {}).items():
            monkeypatch.setenv(k, v)
        rc, out, err = run_cli(capsys, *argv)
        return subprocess.CompletedProcess(["jostle", *map(str, argv)], rc, out, err)
    return run


@pytest.fixture
def fake_bench(monkeypatch):
    """jostle-bench replaced by tests/py/fake_bench.py (no MPI needed)."""
    monkeypatch.setenv("JOSTLE_BENCH", str(FAKE_BENCH))
    monkeypatch.setenv("PYTHON", sys.executable)
    return FAKE_BENCH


@pytest.fixture
def campaign_dir(tmp_path, data):
    """A campaign directory with an intra-node and an inter-node run."""
    d = tmp_path / "results" / "c1"
    d.mkdir(parents=True)
    for name in ("pingpong_intra.jsonl", "pingpong_inter.jsonl"):
        shutil.copy(data / name, d / name)
    return d


def _cluster(tmp_path_factory, two):
    from slurmlocal import Cluster
    cluster = Cluster(tmp_path_factory.mktemp("slurm"), two)
    cluster.start()
    return cluster


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """A real one-node SLURM (MpiDefault=none) for the whole session; stopped by its pids."""
    cluster = _cluster(tmp_path_factory, False)
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def slurm2(tmp_path_factory):
    """Two SLURM nodes in network namespaces (jsl-n1, jsl-n2), TCP between them."""
    cluster = _cluster(tmp_path_factory, True)
    yield cluster
    cluster.stop()


# ------------------------------------------------ `make test` runs the tests side by side
# (pytest-xdist, `-n N --dist loadgroup`): what a test shares with others stays on one worker,
# and the slowest start first.

def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: 20 s or more on a 2-core machine; under xdist these start first, "
                   "so that none is left running alone at the end")


def _shared_setup(item):
    """The name of the first module- or session-scoped fixture of this directory that ITEM uses
    (a SLURM, two network namespaces, a set of MPI runs), or None."""
    for name in item.fixturenames:
        for fd in item._fixtureinfo.name2fixturedefs.get(name, ()):
            if fd.scope in ("module", "session") and Path(fd.func.__code__.co_filename).parent == HERE:
                return f"{fd.func.__module__}.{name}"
    return None


def pytest_itemcollected(item):
    """Under xdist: every test of one shared set-up in one group (xdist_group, read by xdist's
    own collection hook), so that the set-up is made once, on one worker, and never twice at
    once (the two-node SLURM's namespaces have fixed names)."""
    shared = _shared_setup(item) if hasattr(item.config, "workerinput") else None
    if shared:
        item.add_marker(pytest.mark.xdist_group(shared))


def pytest_collection_modifyitems(config, items):
    """Under xdist: the tests marked slow first (xdist hands out work in collection order)."""
    if hasattr(config, "workerinput"):
        items.sort(key=lambda it: it.get_closest_marker("slow") is None)
