"""A campaign as a SLURM batch job: the sbatch script, the jobs submitted for a campaign
directory (SLURM's sbatch and the jobs' state: run/slurm.py).

The script only reruns the study's own command: a campaign skips what is complete, so a job
that was requeued, cancelled or ran out of time is continued by submitting it again.
"""

import json
import re
import shlex
import sys
import time
from pathlib import Path

from ..errors import UsageError
from . import slurm

SCRIPT = "jostle-job.sbatch"
JOBS = "jobs.json"      # [{"job", "submitted", "script"}], oldest first
# What SLURM takes for a partition (a comma-separated list), an account or a QOS: a name
# without whitespace, quotes or control characters, so that nothing can end an #SBATCH line.
_NAME = re.compile(r"^[A-Za-z0-9_.+-]{1,64}$", re.ASCII)


def slurm_name(text: str, what: str, allow_list: bool = False) -> str:
    """TEXT if it is a SLURM WHAT (partition, account: letters, digits, _ . + -), else a
    UsageError naming it: checked again here, as no value reaches a job script unchecked."""
    parts = text.split(",") if allow_list else [text]
    if not all(_NAME.fullmatch(p) for p in parts):
        raise UsageError(f"{ascii(text)} is not allowed as a SLURM {what}; expected letters, "
                         "digits and _ . + - only" + (" (a comma-separated list)" if allow_list
                                                      else ""))
    return text
def _directive_value(text: str) -> str:
    """A value for an #SBATCH line: one line, quoted when it holds a space (sbatch reads
    quotes there; it runs no shell)."""
    if any(ch in text for ch in '"\n\r\0') or not text.isprintable():
        raise UsageError(f"{ascii(text)} cannot go into a job script: no quotes or control "
                         "characters allowed")
    return f'"{text}"' if any(ch.isspace() for ch in text) else text


def script(study_argv, *, nodes, time_limit, partition=None, account=None, directory: Path,
           hosts_from_allocation=False, cwd=None) -> str:
    """The sbatch script that runs `jostle STUDY_ARGV` from CWD in an allocation of NODES."""
    cwd = Path(cwd or Path.cwd()).absolute()
    directives = [f"--job-name={_directive_value('jostle-' + directory.name)}", f"--nodes={nodes}",
                  f"--time={time_limit}",
                  # the nodes to itself: other jobs would be measured too; and srun may then
                  # start as many ranks as the node has CPUs, whatever the study needs
                  "--exclusive",
                  f"--output={_directive_value(str(directory.absolute()) + '/slurm-%j.out')}", "--open-mode=append",
                  "--requeue"]
    if partition:
        directives.append(f"--partition={_directive_value(slurm_name(partition, 'partition', True))}")
    if account:
        directives.append(f"--account={_directive_value(slurm_name(account, 'account'))}")
    command = shlex.join([sys.executable, "-m", "jostle.cli", *study_argv])
    if hosts_from_allocation:
        command += ' --hosts "$(scontrol show hostnames "$SLURM_JOB_NODELIST" | paste -sd,)"'
    return "\n".join([
        "#!/bin/bash",
        f"# written by `jostle submit` on {time.strftime('%Y-%m-%d %H:%M:%S')}: runs the campaign",
        f"# {directory}; what is complete there is skipped, so submitting again continues it.",
        *(f"#SBATCH {d}" for d in directives),
        "set -euo pipefail",
        f"cd {shlex.quote(str(cwd))}",
        "echo \"jostle: job $SLURM_JOB_ID on $SLURM_JOB_NODELIST, $(date -u +%FT%TZ)\"",
        command, ""])


def submit(script_path: Path) -> str:
    """sbatch SCRIPT_PATH; the job id, also appended to the directory's jobs.json."""
    job = slurm.sbatch(script_path)
    log = script_path.parent / JOBS
    jobs = read_jobs(script_path.parent)
    jobs.append({"job": job, "submitted": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "script": script_path.name})
    log.write_text(json.dumps(jobs, indent=1) + "\n")
    return job


def read_jobs(directory: Path) -> list:
    try:
        jobs = json.loads((Path(directory) / JOBS).read_text())
        return jobs if isinstance(jobs, list) else []
    except (OSError, ValueError):
        return []
