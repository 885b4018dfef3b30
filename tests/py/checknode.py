"""What the tests of `jostle check` on this machine share (test_check_system.py,
test_check_budget.py, bench/check_targets.py): this machine as a node of its own in a cgroup
v1 cpu group, a reference saved there, checks in a row."""

import fcntl
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from mpijobs import ENV, built
from slurmlocal import remove_group

REPO = Path(__file__).resolve().parents[2]
JOSTLE = [sys.executable, "-m", "jostle.cli"]
CGROUP_CPU = Path("/sys/fs/cgroup/cpu")
SAVE = ["--compute-cores", "1", "--oversubscribe", "--load-sizes", "4,1M"]
BUDGET = 10     # beside the suite's other workers: bench/check_targets.py measures 8
SHARED_REPEAT = 2


def jostle(*argv, timeout=300, prefix=(), env=None):
    t0 = time.monotonic()
    r = subprocess.run([*prefix, *JOSTLE, *map(str, argv)], capture_output=True, text=True,
                       timeout=timeout, env={**ENV, **(env or {})})
    r.wall = time.monotonic() - t0
    return r


class Group:
    """A cgroup v1 cpu group (under PARENT) that processes join: cpu.shares SHARES, a CFS
    quota of QUOTA_US per 100 ms (-1: none)."""

    def __init__(self, name, shares=1024, quota_us=-1, parent=None):
        root = parent.dir if parent else CGROUP_CPU
        if not (CGROUP_CPU / "cpu.cfs_quota_us").exists() or os.geteuid() != 0:
            pytest.skip("needs root and the cgroup v1 cpu controller at /sys/fs/cgroup/cpu")
        self.dir = root / name
        self.dir.mkdir(exist_ok=True)
        (self.dir / "cpu.shares").write_text(str(shares))
        (self.dir / "cpu.cfs_period_us").write_text("100000")
        self.set(quota_us)

    def set(self, quota_us):
        (self.dir / "cpu.cfs_quota_us").write_text(str(quota_us))

    def prefix(self):
        """A command prefix that runs the rest inside the group."""
        return ["sh", "-c", f'echo $$ > {self.dir}/cgroup.procs && exec "$@"', "sh"]

    def add(self, pid):
        (self.dir / "cgroup.procs").write_text(str(pid))

    def remove(self):
        remove_group(self.dir, CGROUP_CPU)


def make_node() -> Group:
    """This machine as a node of its own: the checks' processes in a cpu group of the
    largest cpu.shares. The machine may be shared with other work (other sessions' test
    suites): outside a cgroup each session is an autogroup of equal weight, so that a check's
    ranks got a ninth of the cores, and nice does not cross autogroups. In the group they get
    nearly all of it. When others keep the machine busy, the checks also run with
    --no-busy-check (their rule would rightly skip them), and a warning says so."""
    from jostle.run import check_node
    g = Group(f"jostle-check-{os.getpid()}", shares=262144)
    load = check_node.busy_now(2.0)
    why = check_node.why_busy(load, 0.25, 0.1, before=True)
    g.busy_flags = ["--no-busy-check"] if why else []
    if why:
        warnings.warn(f"this machine is shared ({why}): the checks run in a cpu group of the "
                      "largest shares, with --no-busy-check", stacklevel=2)
    return g


def save_site(d: Path, node, budget=BUDGET, repeat=5, prefix=(), env=None, may_fail=False,
              tolerance=None):
    """This machine's reference saved in D/site.toml (class `here`), or None when the check
    says the node is busy; with MAY_FAIL, the line of a save that failed instead of an
    error. A reference refused as too wide (the noise of this guest: its 1 MiB ping-pong
    bandwidth dips 15% for one launch in five) is saved again with the site's choice of the
    widest tolerance allowed (--tolerance 0.5), the refusal kept in node.refusals. The
    saves' wall times are in node.save_walls. TOLERANCE: the site's choice from the start."""
    path = d / "site.toml"
    argv = ["check", "--save-reference", "--site", path, "--class", "here", "--match", "*",
            *SAVE, "--budget", budget, "--repeat", repeat, "--spool", d / "spool",
            *node.busy_flags, *(["--tolerance", tolerance] if tolerance else [])]
    r = jostle(*argv, prefix=[*node.prefix(), *prefix], env=env)
    node.save_walls = [r.wall]
    if r.returncode == 2 and "tolerance would be" in r.stderr:
        node.refusals = [*getattr(node, "refusals", []), r.stderr.strip().splitlines()[-1]]
        r = jostle(*argv, "--tolerance", "0.5", prefix=[*node.prefix(), *prefix], env=env)
        node.save_walls.append(r.wall)
    if r.returncode == 3:
        return None
    if may_fail and r.returncode != 0:
        return (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
    assert r.returncode == 0, r.stderr
    return path


def shared_site(tmp_path_factory, node) -> Path:
    """One reference of this machine for the whole session (test_check_system, test_check_mpi):
    saved by the first worker that asks, under a lock, the others reading it (a save is 2
    checks at the budget, 20 s of both cores: saved once per module it cost 45 s of the
    suite's CPU twice). 2 checks with the site's tolerance, the widest allowed (0.5): what the
    tests judge is a healthy node and one at 30% of a core (-90%); the refusal of 2 checks
    without it is test_check_mpi's. Saved with --no-busy-check whoever asks: the suite's own
    workers keep the machine busy."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent          # the session's, above each worker's own
    d = root / "check-site"
    d.mkdir(exist_ok=True)
    with open(d / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (d / "site.toml").exists():
            flags, node.busy_flags = node.busy_flags, ["--no-busy-check"]
            try:
                save_site(d, node, repeat=SHARED_REPEAT, tolerance=0.5)
            finally:
                node.busy_flags = flags
        return d / "site.toml"


def busy_while(spool: Path, node) -> str:
    """Why the newest check in SPOOL would have been skipped as busy, had --no-busy-check not
    been given (its record's load while it measured, by the check's own rule), or "". On a
    quiet machine (no --no-busy-check) always ""."""
    newest = max(Path(spool).glob("check-*.json"), key=lambda p: p.stat().st_mtime)
    return busy_during(json.loads(newest.read_text()), node)


def busy_during(record: dict, node) -> str:
    """busy_while's answer for the check of RECORD."""
    if not node.busy_flags:
        return ""
    from jostle.run import check_node
    during = record["load"].get("during")
    if not during:
        return ""
    load = check_node.Load(during["seconds"], during["cores"], during["others_cores"],
                           during["runnable"], {int(u): c for u, c in during["users"].items()})
    return check_node.why_busy(load, 0.25, 0.1, before=False)


def unhealthy_and_quiet(r, spool, node) -> bool:
    """A check R that failed where nothing excused it. Beside the suite's other workers a
    neighbour's memory traffic slowed a memory latency by 143% for two checks in a row (CI,
    2026-11-29: the machine shared, others using 1.94 of its 2 cores): what a loaded node
    reads, which the check's own busy rule would have skipped. Such a failure is reported as
    a warning; on a quiet machine, or where the check's record says it measured undisturbed,
    it is an error."""
    if r.returncode != 1:
        return False
    why = busy_while(spool, node)
    if why:
        warnings.warn(f"a check failed beside other work ({why}): {r.stdout.strip()}",
                      stacklevel=2)
    return not why


def checks_in_a_row(site, node, spool, n, budget=BUDGET, prefix=(), env=None) -> tuple:
    """N checks one after the other: ([(exit, wall, line)], [the retests]). A failure is
    retested at once, as --slurm's suspect mode does before it drains; a retest that fails
    too is an error unless the node was busy while it measured (unhealthy_and_quiet)."""
    def one():
        r = jostle("check", "--site", site, "--budget", budget, "--spool", spool,
                   *node.busy_flags, prefix=[*node.prefix(), *prefix], env=env)
        return r, (r.returncode, round(r.wall, 2), r.stdout.strip())
    out, retests = [], []
    for _ in range(n):
        out.append(one()[1])
        if out[-1][0] == 1:
            r, line = one()
            retests.append(line)
            assert not unhealthy_and_quiet(r, spool, node), \
                ("failed twice in a row, undisturbed", out[-1], line)
    return out, retests


def healthy_enough(out, retests, node) -> bool:
    """Every check healthy, or at most one in ten failed and healthy on its retest (what
    --slurm's suspect mode lets pass)."""
    return all(o[0] == 0 for o in out) or len(retests) <= max(1, len(out) // 10)


def handmade_site(tmp_path) -> Path:
    """A class of this machine with a reference written by hand (nothing measured)."""
    bench = built("openmpi")
    facts = json.loads(subprocess.run([bench, "--machine"], capture_output=True, text=True).stdout)
    lib = json.loads(subprocess.run([bench, "--version"], capture_output=True, text=True).stdout)
    from jostle.analysis import check_site
    m = check_site.machine_of(facts, lib["mpi_library"])
    path = tmp_path / "hand.toml"
    path.write_text(f"""schema = 1
[class.here]
hosts = ["*"]
compute_cores = 1
oversubscribe = true
[class.here.machine]
cpu = {json.dumps(m["cpu"])}
cores = {m["cores"]}
numa_nodes = {m["numa_nodes"]}
mpi = {json.dumps(m["mpi"])}
[class.here.reference.memory_latency]
value = 100.0
tolerance = 0.2
""")
    return path
