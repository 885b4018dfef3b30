"""A suite killed from outside leaves its SLURM clusters running (one with a health check
measures this machine every 40 s): the next suite's start stops what a dead test process owned,
and leaves a living one's alone."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import slurmlocal
from jostle.records.sidecar import pid_alive

pytestmark = pytest.mark.system
HERE = Path(__file__).resolve().parent


def _alive(pidfile: Path) -> bool:
    try:
        return pid_alive(int(pidfile.read_text().split()[0]))
    except (OSError, ValueError):
        return False


def test_a_dead_owners_cluster_is_stopped_and_a_living_ones_kept(tmp_path):
    dead = tmp_path / "dead"
    dead.mkdir()
    # a test process that starts a cluster and dies without a word (os._exit: as SIGKILL)
    child = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(HERE)!r})
        from pathlib import Path
        import slurmlocal
        slurmlocal.Cluster(Path({str(dead)!r})).start()
        os._exit(0)
    """)
    r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=600)
    if r.returncode != 0 and "Skipped" in r.stderr:
        pytest.skip(r.stderr.strip().splitlines()[-1])
    assert r.returncode == 0, r.stderr
    assert _alive(dead / "slurmctld.pid"), "the child's cluster did not start"
    mine = slurmlocal.Cluster(tmp_path / "mine")        # a living owner's entry: this process
    mine.own()
    try:
        stopped = slurmlocal.sweep_orphans()
        assert str(dead) in stopped and str(mine.dir) not in stopped, stopped
        assert not _alive(dead / "slurmctld.pid") and not _alive(dead / "munged.pid")
        assert mine.owner.exists()
        assert slurmlocal.sweep_orphans() == []          # nothing left twice
    finally:
        mine.disown()
        subprocess.run(["bash", str(slurmlocal.SCRIPT), "stop", str(dead)], capture_output=True)


def test_a_dead_processs_cpu_group_is_removed():
    cpu = Path("/sys/fs/cgroup/cpu")
    if not (cpu / "cpu.cfs_quota_us").exists() or os.geteuid() != 0:
        pytest.skip("needs root and the cgroup v1 cpu controller")
    p = subprocess.Popen(["true"])
    p.wait()                                             # a pid that is gone
    g = cpu / f"jostle-check-{p.pid}"
    g.mkdir()
    try:
        assert str(g) in slurmlocal.sweep_orphans() and not g.exists()
    finally:
        if g.exists():
            g.rmdir()
