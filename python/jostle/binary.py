"""jostle-bench from outside: where the binary is (--bench, $JOSTLE_BENCH, the checkout's
build/, then PATH) and `ask`, the one way to put it a question without an MPI launcher.

Below records (its --describe), run (its queries, launches) and sizes (--parse-sizes), so that
every one of them asks it the same way and reads its exit status the same way.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional

from .errors import JostleError, UsageError

# How jostle-bench's rank 0 says a usage error (core/errors.c): once, however many ranks.
USAGE_PREFIX = "jostle-bench: error: "


def ask(bench, *args, stdin: Optional[str] = None, timeout: float = 60, answer: str = "json"):
    """BENCH ARGS run alone (no launcher): its JSON answer (ANSWER "json") or its standard
    output ("text"). Exit 2 is the caller's bad input: UsageError with the bench's own error
    line; any other failure, a time-out or an answer that is not JSON is a JostleError."""
    argv = [str(bench), *map(str, args)]
    shown = " ".join(argv)
    try:
        out = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise JostleError(f"'{shown}' failed: {e}") from None
    lines = [x.strip() for x in out.stderr.splitlines() if x.strip()]
    if out.returncode == 2:
        said = [x for x in lines if x.startswith(USAGE_PREFIX)] or lines[-1:]
        raise UsageError(said[0].removeprefix(USAGE_PREFIX) if said
                         else f"jostle-bench refused '{' '.join(map(str, args))}'")
    if out.returncode != 0:
        raise JostleError(f"'{shown}' exited {out.returncode}: "
                          + (lines[-1][:500] if lines else "(no message)"))
    if answer == "text":
        return out.stdout
    try:
        return json.loads(out.stdout)
    except ValueError:
        raise JostleError(f"'{shown}' did not print JSON: {out.stdout.strip()[:200]!r}") from None


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
