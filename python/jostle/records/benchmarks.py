"""What jostle-bench says about itself (`jostle-bench --describe`): every benchmark, its options
(argument, default, allowed values, help), its metrics and their orientation, the ranks it needs.

The one source of truth for these is the C descriptor of each benchmark; Python reads them here
and never repeats them. The committed copy describe.json (package data) serves where no bench is
built (a laptop that plots and reports); tests/py/test_describe.py fails when it and the built
bench disagree. Options common to every benchmark are under "common"; a benchmark's own default
message sizes are its "default_sizes" (None: it takes no --sizes).
"""

import functools
import json
from importlib import resources
from pathlib import Path
from typing import Optional

from ..binary import ask
from ..errors import JostleError

SCHEMA = 1
COPY = "describe.json"   # python/jostle/describe.json: package data of jostle itself


@functools.lru_cache(maxsize=None)
def _copy() -> dict:
    return _checked(json.loads(resources.files("jostle").joinpath(COPY).read_text()), COPY)


def _checked(d: dict, where: str) -> dict:
    if not isinstance(d, dict) or d.get("schema") != SCHEMA or "benchmarks" not in d:
        raise JostleError(f"{where}: not a jostle-bench description of schema {SCHEMA}")
    return d


def read_bench(bench) -> dict:
    """The description a built jostle-bench prints (`BENCH --describe`, no MPI start-up)."""
    return _checked(ask(bench, "--describe"), f"{bench} --describe")


def describe(bench: Optional[Path] = None) -> dict:
    """The whole description: the committed copy, or BENCH's own when given."""
    return read_bench(bench) if bench else _copy()


def names() -> list:
    return [b["name"] for b in _copy()["benchmarks"]]


def benchmark(name: str) -> dict:
    for b in _copy()["benchmarks"]:
        if b["name"] == name:
            return b
    raise KeyError(f"jostle-bench has no benchmark '{name}'; it has {', '.join(names())}")


def option(bench: str, name: str) -> dict:
    """{"name", "arg", "default", "choices", "help"} of BENCH's option NAME (its own, else the
    harness's common one; --sizes with BENCH's default sizes)."""
    b = benchmark(bench)
    for o in b["options"] + _copy()["common"]["options"]:
        if o["name"] == name:
            return {**o, "default": b.get("default_sizes")} if name == "sizes" else o
    raise KeyError(f"jostle-bench {bench} has no option --{name}")


def default(bench: str, name: str) -> Optional[str]:
    return option(bench, name)["default"]


def choices(bench: str, name: str) -> tuple:
    return tuple(option(bench, name)["choices"] or ())


def metric(bench: str, name: str) -> dict:
    """{"name", "unit", "better"} of BENCH's metric NAME; better is "lower" or "higher"."""
    for m in benchmark(bench)["metrics"]:
        if m["name"] == name:
            return m
    raise KeyError(f"jostle-bench {bench} has no metric '{name}'")
