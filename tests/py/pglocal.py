"""A throwaway PostgreSQL server for the tests: Debian's `postgresql` (initdb and pg_ctl from
/usr/lib/postgresql/VERSION/bin), a cluster in a temporary folder listening only on a unix
socket there, run as the `postgres` user when the tests run as root (PostgreSQL refuses root).
Stopped by pg_ctl and removed after."""

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest


def binaries():
    """The folder of initdb and pg_ctl, newest version first, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: [int(x) for x in Path(p).parts[-3].split(".") if x.isdigit()])
    if found:
        return Path(found[-1]).parent
    which = shutil.which("initdb")
    return Path(which).parent if which else None


class Postgres:
    def __init__(self):
        self.bin = binaries()
        if self.bin is None:
            pytest.skip("PostgreSQL is not installed (apt-get install postgresql: "
                        "scripts/install-deps.sh)")
        self.user = None
        if os.geteuid() == 0:
            try:
                self.user = pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip("running as root and there is no 'postgres' user to run the server")
        self.dir = Path(tempfile.mkdtemp(prefix="jostle-pg-"))
        self.data = self.dir / "data"
        if self.user:
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
        self.url = f"postgresql://jostle@/postgres?host={self.dir}"

    def _run(self, *argv, timeout=120):
        cmd = [str(self.bin / argv[0]), *argv[1:]]
        if self.user:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)

    def init(self):
        r = self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "jostle",
                      "--no-sync", "-E", "UTF8", "--no-locale")
        assert r.returncode == 0, f"initdb failed:\n{r.stdout}\n{r.stderr}"
        return self

    def start(self):
        opts = (f"-c listen_addresses='' -c unix_socket_directories={self.dir} -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100")
        r = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.dir / "log"), "-o", opts,
                      "-w", "-t", "120", "start")
        assert r.returncode == 0, f"pg_ctl start failed:\n{r.stderr}\n" + \
            (self.dir / "log").read_text(errors="replace")[-2000:]
        return self

    def stop(self):
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def remove(self):
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)
