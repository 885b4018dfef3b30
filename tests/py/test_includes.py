"""The include graph of src/: no two modules include each other (a .c and its own .h are one
module), and comm and kernels, side by side, never include one another (design.md)."""

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+/[a-z_0-9]+)\.h"', re.M)


def graph():
    """module ('comm/p2p') -> the modules its .c and .h include."""
    g = {}
    for f in SRC.glob("*/*.[ch]"):
        mod = f"{f.parent.name}/{f.stem}"
        g.setdefault(mod, set()).update(m for m in INCLUDE.findall(f.read_text()) if m != mod)
    return g


def test_no_two_modules_include_each_other():
    g = graph()
    both = sorted({tuple(sorted((a, b))) for a, deps in g.items() for b in deps
                   if a in g.get(b, ())})
    assert not both, f"modules that include each other: {both}"


def test_comm_and_kernels_stay_side_by_side():
    g = graph()
    crossing = [(a, b) for a, deps in g.items() for b in deps
                if {a.split("/")[0], b.split("/")[0]} == {"comm", "kernels"}]
    assert not crossing, crossing
