"""The CPU each test costs: its worker's and that of the children it waited for (mpirun and
its ranks, jostle's subprocesses, the builds), beside pytest's wall times (--durations).
`make test` is CPU-bound on 2 cores (twice as many workers as cores), so its CPU is what a
faster suite must cut; and a test's CPU barely moves when the machine is shared, its wall time
does. A module's set-up counts to its first test. `--cpu-top N` prints the N costliest;
`--timeline FILE` appends a line per test (worker, start, end, CPU, test), to see which tests
keep the suite going once the others are done."""

import json
import os
import resource
import time
from collections import defaultdict

import pytest

_T0 = pytest.StashKey[float]()
_START = pytest.StashKey[float]()
_COST = defaultdict(float)


def _cpu() -> float:
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def pytest_addoption(parser):
    parser.addoption("--cpu-top", type=int, default=0, metavar="N",
                     help="print the N tests that cost the most CPU (with their children)")
    parser.addoption("--timeline", metavar="FILE",
                     help="append a JSON line per test: worker, start, end, CPU, test")


def _phase_start(item):
    item.stash[_T0] = _cpu()
    item.stash.setdefault(_START, time.time())


for _phase in ("setup", "call", "teardown"):
    globals()[f"pytest_runtest_{_phase}"] = pytest.hookimpl(tryfirst=True)(_phase_start)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    t0 = item.stash.get(_T0, None)
    if t0 is not None:
        outcome.get_result().user_properties.append(("cpu_s", _cpu() - t0))
    path = item.config.getoption("--timeline")
    if path and call.when == "teardown":
        with open(path, "a") as f:    # one short line, appended at once: workers do not mix
            f.write(json.dumps({"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                                "start": item.stash.get(_START, None), "end": time.time(),
                                "cpu_s": round(_COST.get(item.nodeid, 0.0), 2),
                                "test": item.nodeid}) + "\n")


def pytest_runtest_logreport(report):
    _COST[report.nodeid] += sum(v for k, v in report.user_properties if k == "cpu_s")


def pytest_terminal_summary(terminalreporter, config):
    n = config.getoption("--cpu-top")
    if not n or not _COST:
        return
    tr = terminalreporter
    tr.write_sep("=", f"{n} costliest tests by CPU (user + system, with children; "
                      f"{sum(_COST.values()):.0f} s in all)")
    for nodeid, s in sorted(_COST.items(), key=lambda kv: -kv[1])[:n]:
        tr.write_line(f"{s:8.1f}s  {nodeid}")
