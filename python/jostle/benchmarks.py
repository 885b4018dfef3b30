"""What jostle-bench says about itself (`jostle-bench --describe`); minimal until issue 25's
reader lands: only metric(), from the committed copy describe.json (package data)."""

import functools
import json
from importlib import resources


@functools.lru_cache(maxsize=None)
def _copy() -> dict:
    return json.loads(resources.files(__package__).joinpath("describe.json").read_text())


def metric(bench: str, name: str) -> dict:
    """{"name", "unit", "better"} of BENCH's metric NAME; better is "lower" or "higher"."""
    for b in _copy()["benchmarks"]:
        if b["name"] == bench:
            for m in b["metrics"]:
                if m["name"] == name:
                    return m
    raise KeyError(f"jostle-bench {bench} has no metric '{name}'")
