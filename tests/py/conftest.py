"""Shared fixtures: the hand-made run files in data/ and a fake jostle-bench."""

import shutil
import signal
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
FAKE_BENCH = HERE / "fake_bench.py"
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "python"))  # usable without `pip install -e` too


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
