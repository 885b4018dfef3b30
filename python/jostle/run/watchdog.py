"""A hard time limit over everything a command starts (`jostle check --timeout`).

Every program is started in a session of its own, and what is killed is the session: every
process in it, not only the program and its process group. mpirun puts each rank in a process
group of its own, so a kill of mpirun's group leaves the ranks behind (orphans spinning on
the cores until they notice); a session holds them all. At the kill time (the limit less a
reserve for writing the record and telling the scheduler) every session still alive is ended
(SIGTERM, then SIGKILL after a short grace) and the program that was running returns as timed
out; at the limit itself, if the command has still not ended (stuck outside a program), the
watchdog ends it: ON_LIMIT (which must be quick), then os._exit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

GRACE_S = 1.0
_TICK = os.sysconf("SC_CLK_TCK")
# Every program runs under run/guard.py, which ends its session when this process dies, even
# by SIGKILL (what no handler here can do).
GUARD = [sys.executable, "-S", str(Path(__file__).with_name("guard.py"))]


class Expired(Exception):
    """The watchdog's kill time came: what was running was killed."""

    def __init__(self, what):
        super().__init__(what)
        self.what = what


@dataclass
class Result:
    status: str            # ok | failed | timeout
    returncode: "int | None"
    elapsed_s: float
    stdout: str = ""
    stderr: str = ""


def _table() -> dict:
    """{pid: (ppid, session)} of every process (/proc/PID/stat: fields 4 and 6)."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 3:
            out[int(d.name)] = (int(fields[1]), int(fields[3]))
    return out


def session_members(sid: int) -> list:
    """The pids of what SID started: the processes of its session, and its descendants (one
    that left the session with setsid is still a child of the one that started it)."""
    table = _table()
    found = {pid for pid, (_, s) in table.items() if s == sid}
    if sid in table:
        found.add(sid)
    grew = True
    while grew:
        more = {pid for pid, (pp, _) in table.items() if pp in found} - found
        found |= more
        grew = bool(more)
    found.discard(os.getpid())
    return sorted(found)


def _cpu_s(pid) -> float:
    """CPU seconds PID has used (utime + stime), 0 when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    f = stat[stat.rfind(")") + 2:].split()
    return (int(f[11]) + int(f[12])) / _TICK


def kill_session(sid: int, grace: float = GRACE_S) -> float:
    """End every process SID started: SIGTERM, then SIGKILL what is left after GRACE (the
    second round also takes what the first left orphaned). Returns the CPU seconds of those
    that were not this process's own children when they were killed: theirs is never in
    this process's getrusage (a rank orphaned by its mpirun's death is not waited for)."""
    targets, cpu, me = set(), {}, os.getpid()
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        targets |= set(session_members(sid))
        alive = [p for p in targets if Path(f"/proc/{p}").exists()]
        if not alive:
            break
        for pid in alive:
            if _ppid(pid) != me:
                cpu[pid] = max(cpu.get(pid, 0.0), _cpu_s(pid))
        for pid in alive:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        end = time.monotonic() + wait
        while time.monotonic() < end and any(_alive(p) for p in targets):
            time.sleep(0.05)
    return sum(cpu.values())


def _ppid(pid) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat[stat.rfind(")") + 2:].split()[1])


def _alive(pid) -> bool:
    """Whether PID is a process that has not ended (a zombie has: its parent will reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:][:1] != "Z"


class Watchdog:
    """TIMEOUT seconds from now for everything started through run(); the last RESERVE
    seconds are left to the caller to end (a record, the scheduler)."""

    def __init__(self, timeout: float, reserve: float = 0.0, on_limit=None, exit_status=124):
        self.t0 = time.monotonic()
        self.kill_at = self.t0 + max(0.0, timeout - reserve)
        # the killed program's caller gets a moment to end on its own before the hard stop
        self.limit = max(self.t0 + timeout, self.kill_at + 1.0)
        self.on_limit = on_limit
        self.exit_status = exit_status
        self.sessions = set()
        self.killed_cpu_s = 0.0     # CPU of what it killed that is not in getrusage
        self.running = ""           # what is being run now, for the reason of a time-out
        self.expired = threading.Event()
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="watchdog")
        self._thread.start()

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def left(self) -> float:
        """Seconds to the kill time."""
        return self.kill_at - time.monotonic()

    def left_to_limit(self) -> float:
        return self.limit - time.monotonic()

    def _kill_all(self):
        with self._lock:
            sessions = list(self.sessions)
        for sid in sessions:
            self.killed_cpu_s += kill_session(sid)

    def _watch(self):
        if self._done.wait(max(0.0, self.kill_at - time.monotonic())):
            return
        self.expired.set()
        self._kill_all()
        if self._done.wait(max(0.0, self.limit - time.monotonic())):
            return
        self._kill_all()      # anything started since, by a caller that did not look
        try:
            if self.on_limit is not None:
                self.on_limit(self.running)
        finally:
            os._exit(self.exit_status)

    def finish(self):
        """The command ended: the watchdog stands down (nothing is left: run() ends each
        session it started)."""
        self._done.set()

    def run(self, argv, what: str, env=None, timeout: "float | None" = None,
            until_limit: bool = False, grace: float = GRACE_S) -> Result:
        """ARGV in a session of its own, its output kept; stopped at the kill time (or at the
        limit with UNTIL_LIMIT: the caller's own ending), or after TIMEOUT seconds (SIGTERM,
        then SIGKILL after GRACE). Raises Expired when the kill time came while it ran (or
        had already come)."""
        if self.expired.is_set() and not until_limit:
            raise Expired(what)
        self.running = what
        t = time.monotonic()
        end = (self.limit if until_limit else self.kill_at) - t
        wait = max(0.0, min(end, timeout) if timeout is not None else end)
        try:
            proc = subprocess.Popen([*GUARD, *argv], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, errors="replace",
                                    start_new_session=True, env=env)
        except OSError as e:
            return Result("failed", None, 0.0, "", f"cannot start '{argv[0]}': {e.strerror}")
        with self._lock:
            self.sessions.add(proc.pid)
        status = None
        try:
            out, err = proc.communicate(timeout=wait)
        except subprocess.TimeoutExpired:
            status = "timeout"
            self.killed_cpu_s += kill_session(proc.pid, grace)
            out, err = _drain(proc)
        finally:
            # what it left behind (a rank whose mpirun died)
            self.killed_cpu_s += kill_session(proc.pid)
            with self._lock:
                self.sessions.discard(proc.pid)
        res = Result(status or ("ok" if proc.returncode == 0 else "failed"), proc.returncode,
                     time.monotonic() - t, out or "", err or "")
        if self.expired.is_set() and not until_limit and res.status != "ok":
            raise Expired(what)
        return res


def _drain(proc):
    """What PROC wrote, once it was killed; a pipe that something still holds open is not
    waited for."""
    try:
        return proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        for f in (proc.stdout, proc.stderr):
            f.close()
        proc.wait()
        return "", ""
