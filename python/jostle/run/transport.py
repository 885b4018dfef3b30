"""The MPI library's transport settings (`jostle-bench --transport`, read through the MPI tool
interface) asked once by a campaign of Open MPI launches on this host, rather than by each
launch's rank 0, and the MTL components Open MPI would open at each start for hardware this
host lacks.

Each launch writes these settings in its meta line. Asked by the launch, the question is a
third process beside the two ranks' MPI_Init: Open MPI's MPI_T_init_thread opens every
component of every framework, 0.25-0.3 s of a launch's 0.5-0.7 s start on 2 cores. The
campaign asks once, in the background while it plans, and hands the answer to each launch
($JOSTLE_TRANSPORT): the same library, environment and files answer the same.

Open MPI opens its PSM MTLs (psm: QLogic InfiniPath, psm2: Intel Omni-Path) at every MPI_Init
to find no device, 0.1 s each on the 2-core guest: they are excluded (`--mca mtl ^…,psm,psm2`,
on the launch line and in the settings recorded) where their device files are absent, so that
the transport chosen is the one it was.

The answer is kept between commands (the cache below): asked again only when the bench, a
library it loads, an MCA parameter file, the MPI variables of the environment or the host
change. Asked each time, it was 0.2-0.26 s of each `jostle pingpong`'s 2.5-3 s on 2 cores."""

import contextlib
import glob
import hashlib
import json
import os
import socket
import subprocess
import threading
from pathlib import Path
from typing import Optional

# Open MPI's MTLs whose hardware is a device file: without it they cannot be chosen.
DEVICES = {"psm": "/dev/ipath*", "psm2": "/dev/hfi1*"}


# What the answer depends on besides the bench and its libraries: the variables an MPI library
# or its transports read, and the MCA parameter files Open MPI reads at start.
ENV_PREFIXES = ("OMPI_", "OPAL_", "PMIX_", "PRTE_", "MPIR_", "MPICH_", "HYDRA_", "UCX_", "FI_",
                "PSM", "HFI_")
MCA_FILES = ("/etc/openmpi/openmpi-mca-params.conf", "~/.openmpi/mca-params.conf")


def cache_dir() -> Path:
    """Where answers are kept: $JOSTLE_CACHE_DIR, else $XDG_CACHE_HOME/jostle, ~/.cache/jostle."""
    if os.environ.get("JOSTLE_CACHE_DIR"):
        return Path(os.environ["JOSTLE_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jostle"


def _stat(path) -> list:
    try:
        st = os.stat(os.path.expanduser(path))
        return [str(path), st.st_mtime_ns, st.st_size]
    except OSError:
        return [str(path), None, None]


def _key(bench) -> str:
    files = [*MCA_FILES, *os.environ.get("OMPI_MCA_mca_param_files", "").split(":")]
    what = {"host": socket.gethostname(), "bench": _stat(os.path.realpath(bench)),
            "env": sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIXES)),
            "files": [_stat(f) for f in files if f]}
    return hashlib.sha256(json.dumps(what).encode()).hexdigest()[:32]


def _libraries(bench) -> list:
    """[path, mtime, size] of each shared library BENCH loads (ldd; [] where it cannot say)."""
    try:
        out = subprocess.run(["ldd", str(bench)], capture_output=True, text=True, timeout=10,
                             stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [_stat(w[2]) for w in (line.split() for line in out.splitlines())
            if len(w) >= 3 and w[1] == "=>" and w[2].startswith("/")]


class Query:
    """`BENCH --transport`, started at once (unless kept from an earlier command: cache_dir()
    /transport-KEY.json, valid while the libraries it names are unchanged); its answer read
    when first needed."""

    def __init__(self, bench):
        self.proc, self.answer, self.bench = None, None, bench
        self.lock = threading.Lock()   # runs side by side ask from their threads
        self.kept = cache_dir() / f"transport-{_key(bench)}.json"
        try:
            got = json.loads(self.kept.read_text())
            if all(_stat(path) == [path, *rest] for path, *rest in got["libraries"]) and \
                    isinstance(got["answer"], dict):
                self.answer = got["answer"]
                return
        except (OSError, ValueError, KeyError, TypeError):
            pass
        try:
            self.proc = subprocess.Popen([str(bench), "--transport"], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         text=True)
        except OSError:
            self.proc = None

    def settings(self) -> Optional[dict]:
        """The settings ({"pml": "^ucx", …}), or None where the bench gave none (each launch
        then asks itself, as before)."""
        with self.lock:
            return self._read()

    def _read(self) -> Optional[dict]:
        if self.proc is not None:
            try:
                out = self.proc.communicate(timeout=60)[0]
                got = json.loads(out) if self.proc.returncode == 0 else None
                self.answer = got if isinstance(got, dict) else None
            except (subprocess.TimeoutExpired, ValueError):
                self.proc.kill()
                self.proc.communicate()
            self.proc = None
            if self.answer is not None:
                self._keep()
        return self.answer

    def _keep(self):
        """The answer written for the next command (whole or not at all; a cache that cannot be
        written is no error: the next command asks again)."""
        tmp = self.kept.with_name(f"{self.kept.name}.{os.getpid()}.tmp")
        try:
            self.kept.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"answer": self.answer,
                                       "libraries": _libraries(self.bench)}) + "\n")
            os.replace(tmp, self.kept)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()


def handed(settings) -> tuple:
    """(the launcher's --mca options, the environment) of a launch given SETTINGS (None:
    nothing handed): the MTLs without a device excluded where the setting excludes (an
    include list is the user's choice, left alone)."""
    if settings is None:
        return [], {}
    mtl, mca = settings.get("mtl"), []
    if isinstance(mtl, str) and (mtl == "" or mtl.startswith("^")):
        have = [c for c in mtl[1:].split(",") if c]
        more = [c for c, dev in DEVICES.items() if c not in have and not glob.glob(dev)]
        if more:
            settings = {**settings, "mtl": "^" + ",".join(have + more)}
            mca = ["mtl", settings["mtl"]]
    return mca, {"JOSTLE_TRANSPORT": json.dumps(settings, separators=(",", ":"))}
