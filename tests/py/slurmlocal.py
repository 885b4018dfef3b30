"""A real one-node SLURM for the tests (scripts/slurm-local.sh), and running commands in it."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "slurm-local.sh"
JOSTLE = [sys.executable, "-m", "jostle.cli"]
CANNOT = 3   # slurm-local.sh: SLURM cannot be had on this machine


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
        r = subprocess.run(["bash", str(SCRIPT), "start2" if self.two else "start", str(self.dir)],
                           capture_output=True, text=True, timeout=600)
        if r.returncode == CANNOT:
            reason = r.stderr.strip().splitlines()[-1]
            pytest.skip(f"no local SLURM{' of two nodes' * self.two}: {reason}")
        assert r.returncode == 0, f"slurm-local.sh start failed:\n{r.stderr}"

    def stop(self):
        subprocess.run(["bash", str(SCRIPT), "stop", str(self.dir)], timeout=120)

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
        return (m.group(1) if m else None), r

    def job_state(self, job):
        r = self.run("scontrol", "show", "job", job)
        m = re.search(r"JobState=(\w+)", r.stdout)
        return m.group(1) if m else None
