"""Where the jostle-bench binary is: --bench, $JOSTLE_BENCH, the checkout's build/, then PATH.

Below launch (which runs it) and sizes (which asks it to parse a sweep), so that both may find it.
"""

import os
import shutil
from pathlib import Path
from typing import Optional

from .errors import JostleError, UsageError


def repo_root() -> Optional[Path]:
    """The checkout this package lives in (python/jostle/binary.py -> repo), if any."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "CMakeLists.txt").exists() else None


def find_bench(mpi: str = "auto", explicit: Optional[str] = None, env=os.environ) -> Path:
    """The jostle-bench to run: explicit, $JOSTLE_BENCH, build/<mpi>/, then PATH."""
    if explicit or env.get("JOSTLE_BENCH"):
        p = Path(explicit or env["JOSTLE_BENCH"])
        if not (p.is_file() and os.access(p, os.X_OK)):
            src = "--bench" if explicit else "JOSTLE_BENCH"
            raise UsageError(f"{src} '{p}' is not an executable file")
        return p.absolute()  # the launcher may start it from another directory
    # build/mpi is the build against the MPI found in PATH (clusters: see the Makefile).
    flavors = ("openmpi", "mpich", "mpi") if mpi == "auto" else (mpi,)
    tried = []
    for base in dict.fromkeys(x for x in (repo_root(), Path.cwd()) if x):
        for flavor in flavors:
            p = base / "build" / flavor / "jostle-bench"
            tried.append(str(p))
            if p.is_file() and os.access(p, os.X_OK):
                return p
    on_path = shutil.which("jostle-bench")
    if on_path and mpi == "auto":
        return Path(on_path)
    raise JostleError("cannot find jostle-bench (tried $JOSTLE_BENCH, " + ", ".join(tried)
                      + (", PATH" if mpi == "auto" else "") + "); build it first (see README) "
                      "or pass --bench PATH")
