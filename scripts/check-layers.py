#!/usr/bin/env python3
"""The layering of src/ (docs/architecture.md), read from the include graph.

Layers, lowest first: core < topo < kernels, comm (side by side) < runtime < harness < bench.
A file may include headers of its own layer or of a lower one; kernels and comm never include
each other; no two modules (a .c with its .h; a public header is one of its own) include each
other, even within a layer; no file under src/ or include/ is longer than the line limit.
Prints one line per breach and exits 1 when there is any, 0 otherwise.

Usage: check-layers.py [ROOT]   (ROOT: the repository, by default this script's parent's parent)
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

RANK = {"core": 0, "topo": 1, "kernels": 2, "comm": 2, "runtime": 3, "harness": 4, "bench": 5}
# The public headers belong to the layer that implements them.
PUBLIC = {"jostle/placement.h": "topo", "jostle/dbcast.h": "comm"}
GENERATED = {"jostle_buildinfo.h": "core"}
MAX_LINES = 500
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of_header(name: str) -> str | None:
    """The layer of a quoted include as the build resolves it (src/, include/, generated)."""
    if name in PUBLIC:
        return PUBLIC[name]
    if name in GENERATED:
        return GENERATED[name]
    top = name.split("/", 1)[0]
    return top if top in RANK and "/" in name else None


def module(path: str) -> str:
    return path.rsplit(".", 1)[0]


def check(root: Path) -> list[str]:
    problems: list[str] = []
    deps: dict[str, set[str]] = {}
    files = sorted(list((root / "src").rglob("*.[ch]")) + list((root / "include").rglob("*.h")))
    for f in files:
        rel = f.relative_to(root).as_posix()
        text = f.read_text(errors="replace")
        lines = text.count("\n")
        if lines > MAX_LINES:
            problems.append(f"{rel}: {lines} lines, more than {MAX_LINES}: split it by concern")
        if rel.startswith("include/"):
            mine = PUBLIC.get(rel[len("include/"):])
            me = module(rel[len("include/"):])
        else:
            mine = rel.split("/")[1]
            me = module(rel[len("src/"):])
        if mine not in RANK:
            if rel.startswith("src/"):
                problems.append(f"{rel}: directory '{mine}' is not a layer ({', '.join(RANK)})")
            continue
        for inc in INCLUDE.findall(text):
            theirs = layer_of_header(inc)
            if theirs is None:
                if not (f.parent / inc).exists():
                    problems.append(f"{rel}: includes \"{inc}\", which is in no layer")
                continue
            if RANK[theirs] > RANK[mine]:
                problems.append(f"{rel}: layer {mine} includes \"{inc}\" of layer {theirs}, "
                                f"which is above it")
            elif theirs != mine and RANK[theirs] == RANK[mine]:
                problems.append(f"{rel}: layer {mine} includes \"{inc}\" of layer {theirs}, "
                                f"which stands beside it")
            other = module(inc)  # a public header is a module of its own: the interface
            if other != me:
                deps.setdefault(me, set()).add(other)
    for a, outs in sorted(deps.items()):
        for b in sorted(outs):
            if a < b and a in deps.get(b, set()):
                problems.append(f"src/{a} and src/{b} include each other: make the "
                                f"dependency one-way")
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    problems = check(root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
