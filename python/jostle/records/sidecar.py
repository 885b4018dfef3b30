"""A run's sidecar, x.launch.json beside x.jsonl: what its launcher wrote about the job (its
status, pid and host), read without the record itself."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

PARTIAL_SUFFIX = ".partial"   # x.jsonl.partial: a run still being written, or cut


def sidecar_path(path) -> Path:
    """results/c/x.jsonl[.partial] -> results/c/x.launch.json"""
    p = Path(path)
    name = p.name.removesuffix(PARTIAL_SUFFIX).removesuffix(".jsonl")
    return p.with_name(name + ".launch.json")


def launcher_state(side) -> str:
    """A sidecar's status, told from what is true now: one that says `running` while its
    launcher (pid on this host) no longer runs was stopped without a word (SIGKILL, a crash)."""
    status = str((side or {}).get("status", "unknown"))
    pid, host = (side or {}).get("pid"), (side or {}).get("host")
    if status != "running" or not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return status
    if host != socket.gethostname():
        return f"running on {host}, as far as this host can tell"
    if not pid_alive(pid):
        return f"gone: its launcher (pid {pid}) stopped without closing it"
    return "running"


def pid_alive(pid) -> bool:
    """Whether process PID (on this host) runs: one of another user's counts."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def read_sidecar(path):
    """The launcher's sidecar of run file PATH, or None when it is missing or unreadable."""
    side = sidecar_path(path)
    try:
        return json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
