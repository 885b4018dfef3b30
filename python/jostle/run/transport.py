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
the transport chosen is the one it was."""

import glob
import json
import subprocess
import threading
from typing import Optional

# Open MPI's MTLs whose hardware is a device file: without it they cannot be chosen.
DEVICES = {"psm": "/dev/ipath*", "psm2": "/dev/hfi1*"}


class Query:
    """`BENCH --transport`, started at once; its answer read when first needed."""

    def __init__(self, bench):
        try:
            self.proc = subprocess.Popen([str(bench), "--transport"], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         text=True)
        except OSError:
            self.proc = None
        self.answer = None
        self.lock = threading.Lock()   # runs side by side ask from their threads

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
        return self.answer


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
