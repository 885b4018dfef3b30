"""A launch as a process: run a command line in its own process group, stream its output and
jostle-bench's progress lines, stop it at its time-out, and pass Ctrl-C, SIGTERM and SIGHUP on
to it so that it closes its records before it ends."""

import os
import select
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Optional

from ..binary import USAGE_PREFIX
from ..errors import Interrupted, JostleError

_PROGRESS_PREFIX = "progress "


@dataclass
class Outcome:
    status: str            # ok | failed | timeout | interrupted
    returncode: Optional[int]
    elapsed_s: float
    stderr_tail: str = ""
    usage_error: str = ""  # jostle-bench's usage error line, without its prefix


class RunInterrupted(Interrupted):
    """Ctrl-C (or SIGTERM/SIGHUP) during a run; carries what the stopped run left."""

    def __init__(self, outcome, signum=signal.SIGINT):
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.outcome = outcome
        self.signum = int(signum)
        self.exit_status = 128 + int(signum)  # 130 for Ctrl-C, as a shell reports it


def _pump(stream, handle):
    for line in iter(stream.readline, ""):
        handle(line.rstrip("\n"))
    stream.close()


def _stop(proc, sig, grace):
    """Send SIG to the run's process group, then SIGKILL it if it outlives GRACE."""
    for s, wait in ((sig, grace), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, s)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _wait(proc, timeout):
    """proc.wait(TIMEOUT), woken by the kernel as the process ends (a pidfd) where Popen's own
    wait with a time-out polls in sleeps of up to 50 ms, each launch's end then noticed 25 ms
    late on average (three launches a ping-pong)."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):   # before Linux 5.3 or Python 3.9, or not Linux
        return proc.wait(timeout)
    try:
        ready = select.poll()   # poll, not select: a descriptor above 1023 is allowed
        ready.register(fd, select.POLLIN)
        if not ready.poll(None if timeout is None else timeout * 1000):
            raise subprocess.TimeoutExpired(proc.args, timeout)
    finally:
        os.close(fd)
    return proc.wait()


def execute(argv, *, timeout: Optional[float], on_stdout: Callable = print,
            on_stderr: Optional[Callable] = None, on_progress: Optional[Callable] = None,
            env=None, grace: float = 10.0, stop: Optional["StopEvent"] = None) -> Outcome:
    """Run ARGV in its own process group; stream its output; stop it at TIMEOUT.

    stdout lines go to ON_STDOUT; stderr lines `progress D T` to ON_PROGRESS(D, T),
    the others to ON_STDERR. Ctrl-C is forwarded to the group as SIGINT (SIGTERM and
    SIGHUP as themselves) so that jostle-bench can close its file, then
    RunInterrupted is raised. Off the main thread (runs side by side), signals reach the
    main thread only: it sets STOP, and the run is stopped the same way.
    """
    tail = deque(maxlen=30)
    usage = []

    def err_line(line):
        if on_progress and line.startswith(_PROGRESS_PREFIX):
            parts = line.split()
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                on_progress(int(parts[1]), int(parts[2]))
                return
        tail.append(line)
        if line.startswith(USAGE_PREFIX) and not usage:
            usage.append(line[len(USAGE_PREFIX):])
        # A usage error is said once, by the caller; what follows it is the MPI library's
        # abort of the job (Open MPI's boxes, MPICH's "BAD TERMINATION"): not echoed.
        if on_stderr and not usage:
            on_stderr(line)

    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace",
                                bufsize=1, start_new_session=True, env=env)
    except OSError as e:
        raise JostleError(f"cannot start '{argv[0]}': {e.strerror}") from None
    pumps = [threading.Thread(target=_pump, args=(proc.stdout, on_stdout), daemon=True),
             threading.Thread(target=_pump, args=(proc.stderr, err_line), daemon=True)]
    for t in pumps:
        t.start()
    status, sig = None, signal.SIGINT
    saved = trap_termination()
    try:
        if stop is None:
            _wait(proc, timeout)
        else:
            while proc.poll() is None and not stop.is_set():
                left = None if timeout is None else timeout - (time.monotonic() - t0)
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(argv, timeout)
                try:
                    proc.wait(0.1 if left is None else min(0.1, left))
                except subprocess.TimeoutExpired:
                    pass
            if stop.is_set() and proc.returncode is None:
                raise _Terminated(stop.signum)
    except subprocess.TimeoutExpired:
        status = "timeout"
        _stop(proc, signal.SIGTERM, grace)
    except (KeyboardInterrupt, _Terminated) as e:
        status, sig = "interrupted", getattr(e, "signum", signal.SIGINT)
        try:
            _stop(proc, sig, grace)
        except (KeyboardInterrupt, _Terminated):  # a second signal: no more patience
            _stop(proc, signal.SIGKILL, 1)
    finally:
        restore_termination(saved)
    for t in pumps:
        t.join(5)
    out = Outcome(status or ("ok" if proc.returncode == 0 else "failed"), proc.returncode,
                  time.monotonic() - t0, "\n".join(tail), usage[0] if usage else "")
    if status == "interrupted":
        raise RunInterrupted(out, sig)
    return out


class _Terminated(Exception):
    def __init__(self, signum):
        self.signum = signum


class StopEvent(threading.Event):
    """Set by the main thread when a signal asks runs on other threads to stop; signum says
    which one to forward."""
    signum = signal.SIGINT

    def request(self, signum):
        self.signum = signum
        self.set()


def signum_of(exc) -> int:
    """The signal an interruption came from: KeyboardInterrupt is SIGINT."""
    return getattr(exc, "signum", signal.SIGINT)


INTERRUPTIONS = (KeyboardInterrupt, _Terminated)


def trap_termination():
    """SIGTERM/SIGHUP to jostle (a batch system's time limit, a closed terminal) must
    reach the run too: it is in its own session, so it would otherwise be orphaned."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum, frame):
        raise _Terminated(signum)
    return {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}


def restore_termination(saved):
    for s, h in saved.items():
        signal.signal(s, h)
