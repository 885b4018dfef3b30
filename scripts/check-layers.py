#!/usr/bin/env python3
"""The layering of src/ (docs/architecture.md), read from the include graph, and of the Python
package python/jostle (PY_RANK below), read from its imports.

Layers, lowest first: core < topo < kernels, comm (side by side) < runtime < harness < bench.
A file may include headers of its own layer or of a lower one; kernels and comm never include
each other; no two modules (a .c with its .h; a public header is one of its own) include each
other, even within a layer; no file under src/ or include/ is longer than the line limit.
In python/jostle a module imports only from its own rank or a lower one (the imports inside
functions too: a lazy import is still an arrow), and no file is longer than the line limit.
Prints one line per breach and exits 1 when there is any, 0 otherwise.

Usage: check-layers.py [ROOT]   (ROOT: the repository, by default this script's parent's parent)
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

RANK = {"core": 0, "topo": 1, "kernels": 2, "comm": 2, "runtime": 3, "harness": 4, "bench": 5}
# The public headers belong to the layer that implements them.
PUBLIC = {"jostle/placement.h": "topo", "jostle/dbcast.h": "comm"}
GENERATED = {"jostle_buildinfo.h": "core"}
MAX_LINES = 500
# Python, lowest first (docs/architecture.md): a module of python/jostle/ is ranked by its
# first name below the package (figures/bcast.py is "figures", commands/run.py "commands").
PY_RANK = {
    "__init__": 0, "errors": 0, "lazy": 0, "units": 0, "sizes": 0, "binary": 0,
    "benchmarks": 1, "results": 1, "run_meta": 1, "repeats": 1, "resume": 1, "launch": 1, "progress": 1, "placement": 1, "topo_links": 1,
    "stats": 2, "rules": 2, "comparison": 2, "bounds": 2, "scan": 2, "campaign": 2, "batch": 2, "simgrid": 2, "contention": 2, "starpu": 2,
    "figures": 3, "model": 4, "advise": 5, "report": 6, "commands": 7, "cli": 8,
}
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


def _py_imports(tree: ast.AST, parts: list[str]) -> list[tuple[int, list[str]]]:
    """(line, the imported module as names below jostle) of every import of the package."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:   # relative: from the module's package, LEVEL-1 packages up
                base = parts[:-1][:len(parts) - node.level] if node.level > 1 else parts[:-1]
            elif (node.module or "").split(".")[0] == "jostle":
                base = []
            else:
                continue
            mod = base + (node.module.split(".") if node.module else [])
            if node.module and node.level == 0:
                mod = node.module.split(".")[1:]
            # "from . import x" names modules; "from .x import y" names one
            targets = [mod] if node.module else [mod + [a.name] for a in node.names]
            out += [(node.lineno, t) for t in targets]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name.split(".")[1:]) for a in node.names
                    if a.name.split(".")[0] == "jostle"]
    return out


def check_python(root: Path) -> list[str]:
    problems: list[str] = []
    pkg = root / "python" / "jostle"
    for f in sorted(pkg.rglob("*.py")):
        rel = f.relative_to(root).as_posix()
        parts = list(f.relative_to(pkg).with_suffix("").parts)
        text = f.read_text(errors="replace")
        if text.count("\n") > MAX_LINES:
            problems.append(f"{rel}: {text.count(chr(10))} lines, more than {MAX_LINES}: split "
                            "it by concern")
        mine = parts[0]
        if mine not in PY_RANK:
            problems.append(f"{rel}: module '{mine}' has no rank ({', '.join(PY_RANK)})")
            continue
        for line, target in _py_imports(ast.parse(text), parts):
            theirs = target[0] if target else "__init__"
            if theirs in PY_RANK and PY_RANK[theirs] > PY_RANK[mine]:
                problems.append(f"{rel}:{line}: {mine} (rank {PY_RANK[mine]}) imports "
                                f"jostle.{'.'.join(target)} ({theirs}, rank {PY_RANK[theirs]}), "
                                "which is above it")
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    problems = check(root) + (check_python(root) if (root / "python" / "jostle").is_dir() else [])
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
