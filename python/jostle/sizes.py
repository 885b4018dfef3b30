"""Message-size specifications: `jostle` asks jostle-bench to parse them (`--parse-sizes`), so
that there is one parser (src/core/sizes.c) and a bad sweep is refused before anything
launches, with the sizes counted for time-outs and progress.

    SPEC := ITEM ("," ITEM)*
    ITEM := N            one size
          | LO:HI        LO, 2·LO, 4·LO, ... up to HI (0:HI gives 0, 1, 2, 4, ...)
          | LO:HI:STEP   LO, LO+STEP, ... up to HI
    N    := digits, an optional binary suffix K, M, G or T (1K = 1024), an
            optional B or iB (4KiB); at most 1T, at most 100000 points in all
"""

import re

from .binary import ask, find_bench
from .errors import UsageError

# N of the grammar above, as src/core/sizes.c's jt_parse_bytes reads it (tests/py/test_sizes.py
# holds the two to the same answers): one count needs no built bench (`jostle history --size`).
_N = re.compile(r"(\d+)(?:([KMGT])(?:I?B)?|B)?", re.IGNORECASE)
_SHIFT = {"K": 10, "M": 20, "G": 30, "T": 40}
MAX_BYTES = 1 << 40


def parse_sizes(spec: str, bench=None) -> list:
    """The sizes of SPEC, in order, by BENCH (give the bench the command launches: its parser
    is the one that will read them); UsageError naming the value when it is not one."""
    return ask(bench or find_bench(), "--parse-sizes", spec)


def parse_bytes(text: str) -> int:
    """One byte count (N above: 65536, 16K, 4KiB, 64M); UsageError naming the value when it
    is not exactly one."""
    m = _N.fullmatch(str(text).strip())
    n = int(m[1]) << _SHIFT.get((m[2] or "").upper(), 0) if m else None
    if n is None or n > MAX_BYTES:
        raise UsageError(f"{ascii(text)} is not allowed; expected one byte count, at most 1T, "
                         "with an optional K/M/G/T suffix (powers of 1024), e.g. 65536, 16K "
                         "or 64M")
    return n


def human(n: int) -> str:
    """4, 1K, 64M, 1G, 1000: the way tables and messages show sizes."""
    for shift, suffix in ((40, "T"), (30, "G"), (20, "M"), (10, "K")):
        if n and n % (1 << shift) == 0:
            return f"{n >> shift}{suffix}"
    return str(n)


def cap_sizes(spec: str, cap: int, bench=None) -> str:
    """SPEC with every size above CAP left out, still as a spec (a preset capped by --sizes)."""
    items = []
    for item in spec.split(","):
        sizes = parse_sizes(item, bench)
        kept = [s for s in sizes if s <= cap]
        if kept and len(kept) < len(sizes):
            parts = item.split(":")
            item = ":".join([parts[0], human(max(kept)), *parts[2:]])
        if kept:
            items.append(item)
    if not items:
        raise UsageError(f"--sizes caps the sweep at {human(cap)} but its smallest size is "
                         f"{human(min(parse_sizes(spec, bench)))}; allowed: a cap at least that")
    return ",".join(items)
