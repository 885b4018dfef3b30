"""Docs that cannot drift silently: every file or folder docs/architecture.md cites exists
(from the repository root, under python/jostle/ or src/, or by its name somewhere in the
tree), and python/pyproject.toml's requires-python is what the code needs: the Python
ruff checks it for (ruff.toml's target-version), and no standard module newer than that."""

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
