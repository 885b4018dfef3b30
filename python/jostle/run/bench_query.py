"""What jostle-bench says when asked (binary.ask), without an MPI launch: its version, the
machine it sees, and whether a run's options would be refused (`--validate`), so that a bad campaign stops
before anything launches and every check is written once, in the bench."""

import copy
import functools
import os
from pathlib import Path
from typing import Optional

from ..binary import ask
from ..errors import JostleError


@functools.lru_cache(maxsize=32)
def _described(bench: str, stamp, env: tuple, args: tuple) -> dict:
    return ask(bench, *args)


def _describe(bench: Path, *args) -> dict:
    """A query whose answer is fixed for one build and environment (the version, the
    machine), asked once per process: `jostle run` plans every step before running it, and
    a step's plan asks what its run asks. A rebuilt bench, a rewritten topology file or
    another environment (HWLOC_XMLFILE) asks again."""
    stamp = tuple(_file_stamp(f) for f in (bench, *args))
    env = tuple(sorted(os.environ.items()))
    return copy.deepcopy(_described(str(bench), stamp, env, args))


def _file_stamp(path):
    """What changes when a file is rewritten (None for an argument that is not a file)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns) if os.path.isfile(path) else None


def bench_version(bench: Path) -> dict:
    """{"version", "git", "mpi_library", "mpi_flavor"} without an MPI launch."""
    return _describe(bench, "--version")


def bench_machine(bench: Path, topology: Optional[str] = None) -> dict:
    return _describe(bench, "--machine", *(["--topology", topology] if topology else []))


def can_validate(bench: Path) -> bool:
    """Whether this jostle-bench judges a run's options without starting MPI (--validate);
    asked once per build and process, a bench that cannot say included."""
    return _can_validate(str(bench), _file_stamp(bench))


@functools.lru_cache(maxsize=8)
def _can_validate(bench: str, stamp) -> bool:
    try:
        common = ask(bench, "--describe").get("common") or {}
    except JostleError:
        return False
    return any(o.get("name") == "validate-options" for o in common.get("options") or [])


def validate(bench: Path, benchmark: str, args, here: bool = True) -> None:
    """`jostle-bench BENCHMARK --validate ARGS`: the checks a run makes only after MPI has
    started (options and their combinations; with HERE, also core ids, NUMA nodes, NICs,
    topology file, kernel rates, external binaries of this host: a run on other hosts is asked
    `--validate-options`), made by the bench itself so that they are written once; its refusal
    is ours (exit 2, its one line). A bench without the mode is not asked (the run still judges)."""
    if can_validate(bench):
        ask(bench, benchmark, "--validate" if here else "--validate-options", *args,
            answer="text")
