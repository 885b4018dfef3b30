"""Docs that cannot drift silently: every file or folder docs/architecture.md cites exists
(from the repository root, under python/jostle/ or src/, or by its name somewhere in the
tree), every name of the package it cites (`jostle.records.benchmarks`, `sizes.parse_sizes`,
`commands/_common.run_campaign`) is a module that defines it, and python/pyproject.toml's
requires-python is what the code needs: the Python ruff checks it for (ruff.toml's
target-version), and no standard module newer than that."""

import ast
import re
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
CITED = re.compile(r"`((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+(?:\.(?:py|c|h|md|toml|json|sh|html|css))"
                   r"|(?:[A-Za-z0-9_.-]+/)+)`")
TREES = ("python", "src", "tests", "bench", "scripts", "docs", "contrib", "share", "include")
# Standard modules that appeared after 3.9, and the version that brought them.
NEW_MODULES = {"tomllib": (3, 11), "wsgiref.types": (3, 12)}


def _exists(cited: str) -> bool:
    for base in (ROOT, ROOT / "python" / "jostle", ROOT / "src", ROOT / "include"):
        if (base / cited).exists():
            return True
    name = cited.rstrip("/")
    return any(p.as_posix().endswith("/" + name) for t in TREES for p in (ROOT / t).rglob("*")
               if "__pycache__" not in p.parts and ".venv" not in p.parts)


def test_every_path_architecture_md_cites_exists():
    text = (ROOT / "docs" / "architecture.md").read_text()
    missing = sorted({c for c in CITED.findall(text) if not _exists(c)})
    assert not missing, f"docs/architecture.md cites what is not in the tree: {missing}"


PACKAGE = ROOT / "python" / "jostle"
TOKEN = re.compile(r"`([A-Za-z_][A-Za-z0-9_./]*)`")
EXTENSIONS = ("py", "c", "h", "md", "toml", "json", "sh", "html", "css", "xml", "jsonl", "txt")


def _module_files(dotted: str) -> list:
    """The package's modules a dotted name (records.store, _common, bench_query) may be: by
    its path below python/jostle, else every module of that name."""
    path = PACKAGE.joinpath(*dotted.split("."))
    found = [f for f in (path.with_suffix(".py"), path / "__init__.py") if f.is_file()]
    if found or "." in dotted:
        return found
    return [f for f in PACKAGE.rglob(f"{dotted}.py") if "__pycache__" not in f.parts]


def _defines(path: Path, name: str) -> bool:
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(n.id == name for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)):
                return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name) == name for a in node.names):
                return True
    return (path.parent / name).is_dir() or (path.parent / f"{name}.py").is_file()


def _unresolved(token: str):
    """Why TOKEN, a name of the package the doc cites, names nothing; None when it does or is
    not such a name."""
    name = token.removeprefix("python/").removeprefix("jostle/").removeprefix("jostle.")
    if "." not in name or name.rsplit(".", 1)[1] in EXTENSIONS or name.endswith("/"):
        return None
    dotted = name.replace("/", ".")
    if (PACKAGE.joinpath(*dotted.split("."))).with_suffix(".py").is_file() or \
            (PACKAGE.joinpath(*dotted.split(".")) / "__init__.py").is_file():
        return None   # a module itself (records.store)
    mod, attr = dotted.rsplit(".", 1)
    files = _module_files(mod)
    if not files:
        return f"{token}: no module {mod}" if token.startswith("jostle.") or "/" in token \
            or any(PACKAGE.rglob(f"{mod.split('.')[0]}*")) else None
    return None if any(_defines(f, attr) for f in files) else f"{token}: {mod} has no {attr}"


def test_every_name_of_the_package_architecture_md_cites_exists():
    text = (ROOT / "docs" / "architecture.md").read_text()
    wrong = sorted({w for t in TOKEN.findall(text) for w in [_unresolved(t)] if w})
    assert not wrong, f"docs/architecture.md cites names the package does not have: {wrong}"


def test_a_name_that_went_away_is_caught():
    assert _unresolved("sizes.parse_sizes") is None
    assert _unresolved("commands/_common.run_campaign") is None
    assert _unresolved("jostle.records.benchmarks") is None
    assert _unresolved("sizes.parse_sizez") == "sizes.parse_sizez: sizes has no parse_sizez"
    assert _unresolved("jostle.records.gone").startswith("jostle.records.gone")


def _minimum(spec: str) -> tuple:
    m = re.fullmatch(r">=\s*(\d+)\.(\d+)", spec.strip())
    assert m, f"requires-python '{spec}': expected >=X.Y"
    return int(m.group(1)), int(m.group(2))


def test_requires_python_is_what_the_code_needs():
    need = _minimum(tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())
                    ["project"]["requires-python"])
    target = tomllib.loads((ROOT / "ruff.toml").read_text())["target-version"]
    assert target == f"py{need[0]}{need[1]}", (
        f"ruff checks the syntax for {target}, requires-python says {need}")
    newer = set()
    for path in (ROOT / "python" / "jostle").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            for n in names:
                if NEW_MODULES.get(n, (0, 0)) > need:
                    newer.add(f"{path.relative_to(ROOT)} imports {n}")
    assert not newer, f"requires-python {need} is older than the code needs: {sorted(newer)}"
