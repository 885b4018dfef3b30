"""Shared fixtures (the hand-made run files in data/, a fake jostle-bench, the built ones, a
SLURM) and the tiers of the tests.

Every test is in one tier: its module's `pytestmark`, or a marker of its own where it differs
(the closest wins):

  unit    no MPI launch, no external service: pure Python, hand-made records, the fake bench,
          and the built jostle-bench's answers that start no MPI (--describe, --validate,
          --machine, --topo); `make test-fast` runs these
  pages   as unit, but a whole page drawn: a command end to end over a campaign of hand-made
          records or the fake bench, every figure rendered (PNG and SVG), the report written;
          a few seconds of CPU each, half of the unit tier's CPU, so not in `make test-fast`
  mpi     launches real ranks (Open MPI, MPICH, SimGrid's smpirun)
  system  the slow real parts: SLURM, network namespaces, the browser, the install

`smoke` marks the one MPI test per library that `make test-fast` runs beside the unit tier.
A test in no tier or in two fails; a unit test that starts an MPI launcher, a SLURM command, a
browser or a real run of jostle-bench (outside its queries) fails, naming it: the marks say what
each tier does, so that `-m unit` stays fast without a list kept by hand.
"""

import atexit
import functools
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
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

pytest_plugins = ["cpu_cost"]     # --cpu-top N: the tests that cost the most CPU


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
def built():
    """built(FLAVOR): the built jostle-bench of openmpi (the default), mpich or simgrid, or the
    test is skipped saying why (not built, SimGrid not installed). (Function-scoped: a shared
    fixture of this directory groups its tests on one xdist worker, below.)"""
    from mpijobs import built
    return built


@functools.cache
def _fake_bench_exe() -> Path:
    """tests/py/fake_bench.py started by this Python, not by its `#!/usr/bin/env python3`: a
    version manager's shim found first in PATH (pyenv's is a chain of bash scripts) made each of
    the fake bench's hundreds of starts cost 0.23 s instead of 0.05 s here. (Not a fixture: a
    shared one would put every test of the fake bench on one xdist worker, below.)"""
    d = Path(tempfile.mkdtemp(prefix="jostle-fake-bench-"))
    atexit.register(shutil.rmtree, d, True)
    exe = d / "fake_bench"
    exe.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(FAKE_BENCH))} "
                   '"$@"\n')
    exe.chmod(0o755)
    return exe


@pytest.fixture
def fake_bench(monkeypatch):
    """jostle-bench replaced by tests/py/fake_bench.py (no MPI needed)."""
    monkeypatch.setenv("JOSTLE_BENCH", str(_fake_bench_exe()))
    monkeypatch.setenv("PYTHON", sys.executable)
    return _fake_bench_exe()


@pytest.fixture(scope="session")
def quick_campaign(tmp_path_factory):
    """`jostle run` (every step, the fake bench) once a session, as a user types it: (exit
    status, stdout, stderr, the campaign's directory). Its tests only read it (test_cli's
    steps, the browser's page): a run costs 9 s of CPU."""
    import contextlib
    import io
    from jostle.cli import main
    d = tmp_path_factory.mktemp("quick")
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        mp.setenv("JOSTLE_BENCH", str(_fake_bench_exe()))
        mp.setenv("PYTHON", sys.executable)
        rc = main(["run", "--launcher", "", "--output-dir", str(d), "--campaign", "q"])
    return rc, out.getvalue(), err.getvalue(), d / "q"


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

TIERS = {
    "unit": "no MPI launch, no external service (make test-fast)",
    "pages": "as unit, but a whole campaign drawn or a report page written (not test-fast)",
    "mpi": "launches real ranks: Open MPI, MPICH, SimGrid's smpirun",
    "system": "the slow real parts: SLURM, network namespaces, the browser, the install",
}
# What each tier may not start (the program's name; a jostle-bench run outside its queries
# starts MPI, as a singleton). A system test may start anything.
MPI_PROGRAMS = {"mpirun", "mpiexec", "mpirun.openmpi", "mpiexec.openmpi", "mpirun.mpich",
                "mpiexec.mpich", "mpiexec.hydra", "orterun", "prterun", "smpirun"}
SYSTEM_PROGRAMS = {"srun", "sbatch", "salloc", "scancel", "squeue", "sinfo", "scontrol",
                   "slurmctld", "slurmd", "chromium", "chromium-browser", "google-chrome",
                   "netns-hosts.sh", "slurm-local.sh", "useradd", "ip", "unshare", "tc"}
FORBIDDEN = {"unit": MPI_PROGRAMS | SYSTEM_PROGRAMS, "pages": MPI_PROGRAMS | SYSTEM_PROGRAMS,
             "mpi": SYSTEM_PROGRAMS, "system": set()}
BENCH_QUERIES = {"--validate", "--validate-options", "--help", "-h"}


def pytest_sessionstart(session):
    """Before any test: the SLURM clusters and cpu groups of a suite killed from outside
    stopped (tests/py/slurmlocal.py: sweep_orphans), once, by the controller, not each worker."""
    if hasattr(session.config, "workerinput"):
        return
    from slurmlocal import sweep_orphans
    for what in sweep_orphans():
        print(f"conftest: stopped {what}, left by a test process that is gone", file=sys.stderr)


def pytest_configure(config):
    for name, what in TIERS.items():
        config.addinivalue_line("markers", f"{name}: tier: {what}")
    config.addinivalue_line(
        "markers", "smoke: the MPI test of each library that `make test-fast` runs")
    config.addinivalue_line(
        "markers", "slow: 20 s or more on a 2-core machine; under xdist these start first, "
                   "so that none is left running alone at the end")


def tier_of(item):
    """The tier markers of ITEM (after collection, its own: pytest_collection_modifyitems)."""
    return sorted({m.name for m in item.iter_markers() if m.name in TIERS})


def _started(argv, env=None):
    """What a command line starts, as the tiers know it: the program's name, or
    'jostle-bench BENCHMARK' for a real run (MPI_Init, a singleton without a launcher); None
    for a program that is not there (Popen fails, as the test may want: nothing starts)."""
    if isinstance(argv, (str, bytes, os.PathLike)):
        argv = [argv]
    argv = [os.fsdecode(a) for a in argv]
    if not argv or not argv[0].strip():
        return None
    exe = argv[0].split()[0]
    if not shutil.which(exe, path=os.pathsep.join(os.get_exec_path(env))):
        return None
    prog = os.path.basename(exe)
    if prog == "jostle-bench" and len(argv) > 1 and not argv[1].startswith("-") \
            and not BENCH_QUERIES & set(argv[2:]):
        return f"jostle-bench {argv[1]}"
    return prog


@pytest.fixture(autouse=True)
def _tier(request, monkeypatch):
    """Each test in exactly one tier, and starting nothing its tier may not."""
    item = request.node
    tiers = tier_of(item)
    if len(tiers) != 1:
        pytest.fail(f"{item.nodeid}: in {len(tiers)} tiers ({', '.join(tiers) or 'none'}): mark "
                    "it (or its module's pytestmark) with one of unit, pages, mpi, system "
                    "(conftest.py)",
                    pytrace=False)
    forbidden = FORBIDDEN[tiers[0]]
    if not forbidden:
        yield
        return
    seen = []
    real_init = subprocess.Popen.__init__

    def init(self, *a, **kw):
        what = _started(a[0] if a else kw.get("args", ()), kw.get("env"))
        if what and (what in forbidden or (what.startswith("jostle-bench ") and MPI_PROGRAMS <= forbidden)):
            seen.append(what)
            raise AssertionError(f"a test marked {tiers[0]} started {what}: mark it "
                                 f"{'mpi' if what in MPI_PROGRAMS or what.startswith('jostle-bench') else 'system'}")
        real_init(self, *a, **kw)

    monkeypatch.setattr(subprocess.Popen, "__init__", init)
    yield
    if seen:  # also when the code under test caught the error
        pytest.fail(f"a test marked {tiers[0]} started {', '.join(seen)}", pytrace=False)


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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """A test's tier is its closest tier marker (its own, else its class's, else its module's
    pytestmark): set on the test alone, before `-m` selects (this hook runs first), so that
    `-m mpi` does not take a unit test of an mpi module. Under xdist: the tests marked slow
    first (xdist hands out work in collection order)."""
    for item in items:
        closest = next((m for m in item.iter_markers() if m.name in TIERS), None)
        if closest is not None and closest not in item.own_markers:
            item.add_marker(closest.name)
    for node in {n for item in items for n in item.listchain()[:-1]}:
        node.own_markers[:] = [m for m in node.own_markers if m.name not in TIERS]
    if hasattr(config, "workerinput"):
        items.sort(key=lambda it: it.get_closest_marker("slow") is None)
