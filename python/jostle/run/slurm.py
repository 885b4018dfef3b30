"""SLURM, in one place: every scontrol, sbatch, sacct and `srun --mpi=list` call jostle makes,
and what it reads of a job's environment (SLURM_*). The rest asks here, so that a site whose
SLURM differs (another output format, a wrapper on PATH) is met in one module.

What jostle only writes for SLURM stays with what writes it: the batch script (run/batch.py),
a drain script's lines (analysis/scan/verdict.py), a drain reason and the decision to drain
(analysis/check.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import JostleError, UsageError

ENV_PREFIX = "SLURM_"
# A drain reason that starts with this is jostle's (`jostle check --slurm` resumes only those).
JOSTLE_PREFIX = "jostle:"


# ---------------------------------------------------------------- the job's environment

def in_job(env=None) -> bool:
    """Whether this process runs inside a SLURM job (an allocation or a batch job)."""
    return bool((os.environ if env is None else env).get("SLURM_JOB_ID"))


def node_name(env=None) -> "str | None":
    """The node's name as slurmd knows it (SLURMD_NODENAME: a prolog's or a health check's
    environment), None elsewhere."""
    return (os.environ if env is None else env).get("SLURMD_NODENAME") or None


def without_job(env=None) -> dict:
    """ENV (os.environ) less SLURM_*: for processes that must not take themselves for the job's
    steps (a prolog's job is not theirs: Open MPI would start its ranks through SLURM)."""
    env = os.environ if env is None else env
    return {k: v for k, v in env.items() if not k.startswith(ENV_PREFIX)}


def has(tool: str = "scontrol") -> bool:
    """Whether SLURM's TOOL is on PATH."""
    return shutil.which(tool) is not None


def job_hosts(env=None) -> "list | None":
    """The host names of this job's nodes (SLURM_JOB_NODELIST expanded), None outside a job."""
    nodelist = (os.environ if env is None else env).get("SLURM_JOB_NODELIST")
    return hostnames(nodelist) if nodelist else None


def hostnames(nodelist: str) -> list:
    """NODELIST ("n[01-03],m1") as host names, by `scontrol show hostnames`."""
    try:
        out = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise JostleError(f"'scontrol show hostnames {nodelist}' failed: {e}") from None
    if out.returncode:
        raise JostleError(f"'scontrol show hostnames {nodelist}': {out.stderr.strip()}")
    return out.stdout.split()


# ---------------------------------------------------------------- batch jobs

def sbatch_path() -> str:
    exe = shutil.which("sbatch")
    if not exe:
        raise UsageError("jostle submit needs SLURM's sbatch, which is not on PATH: run it on a "
                         "login node of a SLURM cluster (or load its module), or use --dry-run "
                         "to see the script")
    return exe


def sbatch(script_path: Path) -> str:
    """sbatch SCRIPT_PATH; the job id."""
    r = subprocess.run([sbatch_path(), "--parsable", str(script_path)], capture_output=True,
                       text=True, timeout=120)
    job = r.stdout.strip().split(";")[0]
    if r.returncode != 0 or not job.isdigit():
        raise JostleError(f"sbatch refused {script_path}: {(r.stderr or r.stdout).strip()[-500:]}")
    return job


def job_state(job: str) -> str:
    """PENDING, RUNNING, COMPLETED, CANCELLED, TIMEOUT, … or 'unknown (…)' when SLURM no longer
    (or cannot) say: squeue and scontrol know recent jobs, sacct the older ones when accounting
    is on."""
    queries = (["scontrol", "-o", "show", "job", job], ["sacct", "-n", "-X", "-P", "-o", "State",
                                                        "-j", job])
    for argv in queries:
        if not shutil.which(argv[0]):
            continue
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        m = re.search(r"JobState=(\w+)", r.stdout) if argv[0] == "scontrol" else \
            re.match(r"\s*([A-Z_]+)", r.stdout)
        if r.returncode == 0 and m:
            return m.group(1)
    if not shutil.which("scontrol"):
        return "unknown (no SLURM commands here)"
    return "unknown (SLURM no longer knows it)"


# ---------------------------------------------------------------- a node's state

@dataclass
class NodeState:
    state: str       # scontrol's State= (e.g. IDLE+DRAIN)
    reason: str      # Reason=, without the [user@time] SLURM appends

    @property
    def drained(self) -> bool:
        return "DRAIN" in self.state.upper()

    @property
    def ours(self) -> bool:
        return self.reason.startswith(JOSTLE_PREFIX)


def parse_node(text: str) -> NodeState:
    """scontrol show node -o's line as (state, reason)."""
    state = re.search(r"\bState=(\S+)", text)
    reason = re.search(r"\bReason=(.*?)(?:\s*\[[^\]@]*@[^\]]*\])?\s*$", text.strip())
    return NodeState(state.group(1) if state else "", reason.group(1).strip() if reason else "")


def show_node(run, node) -> NodeState:
    """The node's state as the controller has it; RUN(argv, what) -> watchdog.Result (a health
    check runs scontrol under its watchdog)."""
    r = run(["scontrol", "show", "node", "-o", node], "scontrol show node")
    if r.status != "ok":
        raise JostleError(f"'scontrol show node {node}' failed: "
                          + (r.stderr.strip().splitlines() or [r.status])[-1])
    return parse_node(r.stdout)


def update_node(run, node, state, reason=None):
    """scontrol update NODE to STATE (drain, resume) with REASON, through RUN as show_node."""
    argv = ["scontrol", "update", f"nodename={node}", f"state={state}"]
    if reason is not None:
        argv.append(f"reason={reason}")
    r = run(argv, f"scontrol update state={state}")
    if r.status != "ok":
        raise JostleError(f"'scontrol update nodename={node} state={state}' failed: "
                          + (r.stderr.strip().splitlines() or [r.status])[-1])


# ---------------------------------------------------------------- srun

def srun_mpi_plugins(run=subprocess.run) -> list:
    """The PMI plugins this srun offers (`srun --mpi=list`), versioned pmix ones included."""
    try:
        out = run(["srun", "--mpi=list"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise JostleError(f"'srun --mpi=list' failed: {e}") from None
    found = []
    # SLURM 22-23 print "MPI plugin types are...", a tab-indented name per line, then
    # "specific pmix plugin versions available: pmix_v4,…"; older ones prefix lines "srun: ".
    for line in (out.stdout + out.stderr).splitlines():
        line = line.removeprefix("srun:").strip()
        if "versions available:" in line:
            found += [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
        elif line and " " not in line and not line.endswith("..."):
            found.append(line)
    if not found:
        raise JostleError("'srun --mpi=list' listed no PMI plugin: "
                          + (out.stderr.strip() or out.stdout.strip())[-300:])
    return list(dict.fromkeys(found))
