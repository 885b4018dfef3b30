#!/usr/bin/env python3
"""The layering of src/ (docs/architecture.md), read from the include graph, and of the Python
package python/jostle (PY_RANK below), read from its imports.

Layers, lowest first: core < topo < kernels, comm (side by side) < runtime < harness < bench.
A file may include headers of its own layer or of a lower one; kernels and comm never include
each other; no two modules (a .c with its .h; a public header is one of its own) include each
other, even within a layer; no file under src/ or include/ is longer than the line limit.
In python/jostle a module imports only from its own folder or a lower one (the imports inside
functions too: a lazy import is still an arrow), no modules import each other (a cycle, even
inside a folder), only commands/ knows argparse and hands no namespace to a lower layer, and no
file is longer than the line limit.
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
# Python, lowest first (docs/architecture.md): a module of python/jostle/ is ranked by its folder
# (analysis/scan/null.py is "analysis"); the modules at the top are the shared small ones, except
# report and cli, ranked by name.  Folders of one rank (figures, export) stand beside each
# other and may not import each other.
PY_RANK = {
    "shared": 0, "records": 1, "run": 2, "analysis": 3, "studies": 4, "figures": 5,
    "export": 5, "report": 6, "commands": 7, "cli": 8,
}
SHARED = {"__init__", "errors", "lazy", "units", "sizes", "binary", "registry"}
# What starts a process: analysis/ is pure functions of records and imports none of it, nor
# anything of run/ (a plan's RunSpecs are made in studies/).
LAUNCHING = {"subprocess", "os.system", "os.popen", "os.spawnv", "os.execv", "binary.ask"}
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


def _py_imports(nodes: list, parts: list[str]) -> list[tuple[int, list[str]]]:
    """(line, the imported module as names below jostle) of every import of the package."""
    out = []
    for node in nodes:
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


def _room(first: str, in_folder: bool) -> str | None:
    """The layer of a module of python/jostle named by its first part below the package."""
    if in_folder or first in ("report", "cli"):
        return first if first in PY_RANK else None
    return "shared" if first in SHARED else None


def _resolve(target: list[str], modules: set[str]) -> str | None:
    """The module (dotted, below jostle) an import names: its longest prefix that is a file or
    a package of the tree ("figures" is figures/__init__)."""
    for n in range(len(target), 0, -1):
        name = ".".join(target[:n])
        if name in modules:
            return name
        if name + ".__init__" in modules:
            return name + ".__init__"
    return "__init__" if "__init__" in modules else None


def _namespaces_passed_down(nodes: list, lower: set[str]) -> list[tuple[int, str]]:
    """(line, call) of every call in a command module that hands an argparse namespace (a
    parameter named args, or what parse_args returned) to a function of a lower layer: below
    commands/ a function takes typed values, never the namespace."""
    spaces = {"args"}
    for node in nodes:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr in ("parse_args", "parse_known_args")):
            spaces |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    out = []
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        root = f
        while isinstance(root, ast.Attribute):
            root = root.value
        if not (isinstance(root, ast.Name) and root.id in lower):
            continue
        given = list(node.args) + [k.value for k in node.keywords]
        if any(isinstance(g, ast.Name) and g.id in spaces for g in given):
            out.append((node.lineno, ast.unparse(f)))
    return out


def _launches(nodes: list, parts: list[str]) -> list[tuple[int, str]]:
    """(line, what) of every way an analysis module could start a process: subprocess, os's
    process calls, jostle-bench's client, or anything of run/."""
    out = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name in LAUNCHING]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module in LAUNCHING:
                out.append((node.lineno, node.module))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if f"{node.value.id}.{node.attr}" in LAUNCHING:
                out.append((node.lineno, f"{node.value.id}.{node.attr}"))
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level and node.module:
            mod = node.module.split(".")
            for a in node.names:
                name = ".".join([*mod, a.name])
                if name in LAUNCHING or mod[0] == "run":
                    out.append((node.lineno, "jostle." + name))
        elif isinstance(node, ast.ImportFrom) and node.level and not node.module:
            out += [(node.lineno, "jostle." + a.name) for a in node.names
                    if a.name in ("run", "binary") and len(parts) == 2]
    return out


def _private_names(nodes: list, siblings: set[str]) -> list[tuple[int, str]]:
    """(line, name) of every private name (_x) a command module takes from another command
    (SIBLINGS): what two commands share goes in a module named _x, or lower, in studies/."""
    mods, out = set(), []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module in siblings:
                out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
            else:
                mods |= {a.asname or a.name for a in node.names if a.name in siblings}
    for node in nodes:
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in mods and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            out.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return out


def _registrations(tree: ast.AST) -> list[tuple[int, str, str]]:
    """(line, registry, name) of every entry a module registers under a literal name, at its
    top level (where registering happens): REG.register("x") as a decorator or REG.add("x", …),
    and @register on a class whose `name` is "x"."""
    def literal_call(node):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("register", "add") and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                and isinstance(node.func.value, ast.Name) and node.func.value.id.isupper()):
            return node.lineno, node.func.value.id, node.args[0].value
        return None

    out = []
    for st in tree.body:
        calls = [st.value] if isinstance(st, (ast.Expr, ast.Assign)) else []
        if isinstance(st, (ast.ClassDef, ast.FunctionDef)):
            calls += st.decorator_list
        out += [r for r in map(literal_call, calls) if r]
        if isinstance(st, ast.ClassDef) and any(
                isinstance(d, ast.Name) and d.id == "register" for d in st.decorator_list):
            for body in st.body:
                if isinstance(body, ast.Assign):
                    for t in body.targets:
                        names = t.elts if isinstance(t, ast.Tuple) else [t]
                        vals = body.value.elts if isinstance(body.value, ast.Tuple) else [body.value]
                        out += [(st.lineno, "register", v.value) for n, v in zip(names, vals)
                                if isinstance(n, ast.Name) and n.id == "name"
                                and isinstance(v, ast.Constant)]
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of GRAPH, one per strongly connected component (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check_python(root: Path) -> list[str]:
    problems: list[str] = []
    pkg = root / "python" / "jostle"
    files = sorted(pkg.rglob("*.py"))
    modules = {".".join(f.relative_to(pkg).with_suffix("").parts) for f in files}
    graph: dict[str, set[str]] = {}
    registered: dict[tuple[str, str], str] = {}
    # the subcommands (a _module is shared by several, its private names its own business)
    commands = {f.stem for f in files if f.parent.name == "commands" and f.stem[0] != "_"}
    for f in files:
        rel = f.relative_to(root).as_posix()
        parts = list(f.relative_to(pkg).with_suffix("").parts)
        me = ".".join(parts)
        text = f.read_text(errors="replace")
        if text.count("\n") > MAX_LINES:
            problems.append(f"{rel}: {text.count(chr(10))} lines, more than {MAX_LINES}: split "
                            "it by concern")
        mine = _room(parts[0], len(parts) > 1)
        if mine is None:
            problems.append(f"{rel}: module '{parts[0]}' has no rank (a folder of "
                            f"{', '.join(PY_RANK)}, or one of the shared {', '.join(sorted(SHARED))})")
            continue
        tree = ast.parse(text)
        nodes = list(ast.walk(tree))
        lower = set()
        for line, target in _py_imports(nodes, parts):
            target = target or ["__init__"]
            other = _resolve(target, modules)
            if other and other != me:
                graph.setdefault(me, set()).add(other)
            theirs = _room(target[0], (pkg / target[0]).is_dir() or target[0] in PY_RANK)
            if theirs is None:
                continue
            if PY_RANK[theirs] > PY_RANK[mine]:
                problems.append(f"{rel}:{line}: {mine} (rank {PY_RANK[mine]}) imports "
                                f"jostle.{'.'.join(target)} ({theirs}, rank {PY_RANK[theirs]}), "
                                "which is above it")
            elif theirs != mine and PY_RANK[theirs] == PY_RANK[mine] and mine != "shared":
                problems.append(f"{rel}:{line}: {mine} imports jostle.{'.'.join(target)} of "
                                f"{theirs}, which stands beside it")
            if mine == "commands" and PY_RANK[theirs] < PY_RANK[mine]:
                lower.add(target[-1])
        for node in nodes:
            if isinstance(node, ast.ImportFrom):
                lower |= {a.asname or a.name for a in node.names
                          if node.level == 2 or (node.module or "").startswith("jostle")}
        if PY_RANK[mine] < PY_RANK["commands"] and re.search(r"^\s*(import|from) argparse\b",
                                                             text, re.M):
            problems.append(f"{rel}: {mine} imports argparse: only commands/ parses arguments")
        if mine == "commands":
            for line, call in _namespaces_passed_down(nodes, lower):
                problems.append(f"{rel}:{line}: passes an argparse namespace to {call}, below "
                                "commands/: give it typed values")
            for line, name in _private_names(nodes, commands - {parts[-1]}):
                problems.append(f"{rel}:{line}: uses {name}, private to another command: "
                                "move it to a shared _module or to studies/")
        if mine == "analysis":
            for line, what in _launches(nodes, parts):
                problems.append(f"{rel}:{line}: analysis uses {what}: analysis never launches "
                                "(measure in run/, plan in studies/, hand analysis the records)")
        for line, reg, name in _registrations(tree):
            first = registered.setdefault((reg, name), f"{rel}:{line}")
            if first != f"{rel}:{line}":
                problems.append(f"{rel}:{line}: {reg} registers '{name}' again (first at "
                                f"{first}): a registry refuses a duplicate name")
    for comp in _cycles(graph):
        problems.append(f"python/jostle: {' -> '.join(comp)} import each other: make the "
                        "dependency one-way")
    return problems


def floors(ranks: dict) -> str:
    """'0 core, 1 topo, 2 kernels comm, …': the layers by floor, lowest first."""
    by: dict[int, list[str]] = {}
    for name, r in ranks.items():
        by.setdefault(r, []).append(name)
    return ", ".join(f"{r} {' '.join(by[r])}" for r in sorted(by))


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    problems = check(root) + (check_python(root) if (root / "python" / "jostle").is_dir() else [])
    for p in problems:
        print(p)
    up = sum("which is above it" in p for p in problems)
    circles = sum("include each other" in p or "import each other" in p for p in problems)
    print(f"src/ by floor: {floors(RANK)}\npython/jostle/ by floor: {floors(PY_RANK)}\n"
          f"{up} arrows up, {circles} circles, {len(problems) - up - circles} other problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
