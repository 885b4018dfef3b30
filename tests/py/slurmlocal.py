"""A real one-node SLURM for the tests (scripts/slurm-local.sh), and running commands in it."""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from jostle.records.sidecar import pid_alive

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "slurm-local.sh"
JOSTLE = [sys.executable, "-m", "jostle.cli"]
CANNOT = 3   # slurm-local.sh: SLURM cannot be had on this machine
# Each running cluster's owner (the test process), its directory and the environment its stop
# needs: a suite killed from outside (SIGKILL) never stops its clusters, and one left with a
# HealthCheckProgram measures this machine every 40 s until someone notices (sweep_orphans).
OWNERS = Path(tempfile.gettempdir()) / "jostle-test-clusters"


class Cluster:
    """One node here, or two (two=True: network namespaces jsl-n1 and jsl-n2, clients in the
    first, see slurm-local.sh start2)."""

    def __init__(self, directory: Path, two=False):
        self.dir = directory
        self.two = two
        self.hosts = ["jsl-n1", "jsl-n2"] if two else ["jostle1"]
        self.env = dict(os.environ, SLURM_CONF=str(directory / "slurm.conf"),
                        PYTHONPATH=str(ROOT / "python"))
        for v in [v for v in self.env if v.startswith("SLURM_") and v != "SLURM_CONF"]:
            del self.env[v]   # a test run inside a job must not look like part of that job

    def start(self):
        self.own()
        r = subprocess.run(["bash", str(SCRIPT), "start2" if self.two else "start", str(self.dir)],
                           capture_output=True, text=True, timeout=600)
        if r.returncode == CANNOT:
            reason = r.stderr.strip().splitlines()[-1]
            pytest.skip(f"no local SLURM{' of two nodes' * self.two}: {reason}")
        assert r.returncode == 0, f"slurm-local.sh start failed:\n{r.stderr}"

    def own(self, env=None):
        """Registers this cluster as this process's, with ENV for its stop (sweep_orphans)."""
        OWNERS.mkdir(exist_ok=True)
        self.owner = OWNERS / f"{os.getpid()}-{abs(hash(str(self.dir)))}.json"
        self.owner.write_text(json.dumps({"pid": os.getpid(), "dir": str(self.dir),
                                          "env": env or {}}))

    def disown(self):
        getattr(self, "owner", Path("/nonexistent")).unlink(missing_ok=True)

    def stop(self):
        subprocess.run(["bash", str(SCRIPT), "stop", str(self.dir)], timeout=120)
        self.disown()

    def run(self, *argv, timeout=300, env=None, cwd=None):
        if self.two:   # clients reach the controller from the first node's namespace only
            argv = ("bash", SCRIPT, "exec", self.dir, *argv)
        return subprocess.run(list(map(str, argv)), capture_output=True, text=True,
                              timeout=timeout, env={**self.env, **(env or {})}, cwd=cwd)

    def salloc(self, n, *argv, **kw):
        return self.run("salloc", "-n", n, "--time", "10", *argv, **kw)

    def sbatch_wait(self, n, script_text, out: Path, **kw):
        """Submits SCRIPT_TEXT (a shell script), waits for it; (job id, the finished sbatch)."""
        r = self.run("sbatch", "--wait", "-n", n, "--time", "10", "-o", out, "--parsable",
                     "--wrap", script_text, **kw)
        m = re.match(r"(\d+)", r.stdout.strip())
        job = m.group(1) if m else None
        if job and r.returncode == -signal.SIGPIPE:
            # sbatch --wait died of SIGPIPE on its connection to slurmctld while it polled
            # (once in a make test beside the suite, the job itself complete): the job's own
            # end state is what it waited for
            deadline = time.monotonic() + 60
            while self.job_state(job) in ("PENDING", "RUNNING", "COMPLETING") and \
                    time.monotonic() < deadline:
                time.sleep(0.5)
            state = self.job_state(job)
            r = subprocess.CompletedProcess(r.args, 0 if state == "COMPLETED" else 1, r.stdout,
                                            r.stderr + f"\nsbatch: SIGPIPE; job {job} {state}")
        return job, r

    def job_state(self, job):
        r = self.run("scontrol", "show", "job", job)
        m = re.search(r"JobState=(\w+)", r.stdout)
        return m.group(1) if m else None


def sweep_orphans() -> list:
    """Stops the clusters whose owner process is gone (a suite killed from outside) and
    removes the cpu groups such a process left (jostle-check-PID); returns what it stopped."""
    stopped = []
    for f in sorted(OWNERS.glob("*.json")) if OWNERS.is_dir() else []:
        try:
            rec = json.loads(f.read_text())
            alive = pid_alive(int(rec["pid"]))
        except (OSError, ValueError, KeyError, TypeError):
            f.unlink(missing_ok=True)
            continue
        if alive:
            continue
        if Path(rec["dir"]).is_dir():
            subprocess.run(["bash", str(SCRIPT), "stop", rec["dir"]], capture_output=True,
                           timeout=120, env={**os.environ, **rec.get("env", {})})
            stopped.append(rec["dir"])
        f.unlink(missing_ok=True)
    cpu = Path("/sys/fs/cgroup/cpu")
    for g in cpu.glob("jostle-check-*") if cpu.is_dir() else []:
        m = re.fullmatch(r"jostle-check-(\d+)", g.name)
        if m and not pid_alive(int(m.group(1))):
            try:
                remove_group(g, cpu)
                stopped.append(str(g))
            except OSError:
                pass
    return stopped


def remove_group(g: Path, root: Path = Path("/sys/fs/cgroup/cpu")):
    """Removes cpu group G and the groups under it, its processes moved to ROOT first."""
    for child in [d for d in g.iterdir() if d.is_dir()]:
        remove_group(child, root)
    for pid in (g / "cgroup.procs").read_text().split():
        try:
            (root / "cgroup.procs").write_text(pid)
        except OSError:
            pass
    g.rmdir()
