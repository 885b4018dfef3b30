"""Runs ARGV as the leader of a session of its own, and ends every process of that session
(and their descendants) when the command that started it dies, even by SIGKILL: the kernel
sends this guard SIGTERM when its parent ends (prctl PR_SET_PDEATHSIG), which no handler of
the parent's can do. mpirun puts each rank in a process group of its own, so without the
guard a `kill -9` of `jostle check` left mpirun and its ranks measuring for 10-20 s on a node
the scheduler believed free (docs/check.md, "Killed").

Run as a script (`python3 -S guard.py ARGV…`): stdlib only, a few milliseconds to start. Its
exit status is ARGV's (128 + N when a signal N ended it)."""

import ctypes
import os
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1


def main(argv) -> int:
    parent = os.getppid()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:     # the parent died before the guard was armed
        return 128 + signal.SIGTERM

    def end(signum, _frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from watchdog import kill_session     # the module beside this one, stdlib only
        kill_session(os.getsid(0), grace=0.3)
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, end)
    try:
        child = subprocess.Popen(argv)
    except OSError as e:
        print(f"cannot start '{argv[0] if argv else ''}': {e.strerror}", file=sys.stderr)
        return 127
    rc = child.wait()
    return 128 - rc if rc < 0 else rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
