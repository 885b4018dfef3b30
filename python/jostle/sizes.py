"""Message-size specifications, parsed exactly as jostle-bench parses --sizes.

Parsing here too lets `jostle` refuse a bad sweep before it launches anything,
and count the points so that time-outs and progress can be sized.

    SPEC := ITEM ("," ITEM)*
    ITEM := N            one size
          | LO:HI        LO, 2·LO, 4·LO, ... up to HI (0:HI gives 0, 1, 2, 4, ...)
          | LO:HI:STEP   LO, LO+STEP, ... up to HI
    N    := digits, an optional binary suffix K, M, G or T (1K = 1024), an
            optional B or iB (4KiB); at most 1T, at most 100000 points in all
(src/core/sizes.c is the reference; keep the two in step.)
"""

import re

from .errors import UsageError

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_NUMBER = re.compile(r"^(\d+)(?:([KMGT])(?:i?B)?|B)?$", re.IGNORECASE)
MAX_BYTES = 1 << 40          # beyond any message an MPI count can hold
MAX_POINTS = 100_000         # a longer sweep is almost certainly a typo (a missing ':step')


def parse_size(text: str, spec: str = "") -> int:
    m = _NUMBER.match(text.strip())
    if not m:
        where = f" in --sizes '{spec}'" if spec else ""
        raise UsageError(
            f"invalid size '{text}'{where}: expected a non-negative integer "
            "with an optional K, M, G or T suffix (e.g. 0, 64, 4K, 1G)")
    v = int(m.group(1)) * _SUFFIX[(m.group(2) or "").upper()]
    if v > MAX_BYTES:
        raise UsageError(f"size '{text}' is too large: at most {MAX_BYTES} bytes (1T)")
    return v


def parse_sizes(spec: str) -> list:
    """Expand SPEC into the list of sizes in the order jostle-bench measures them."""
    if not spec or not spec.strip():
        raise UsageError("empty --sizes: expected e.g. '0:1K', '1:1024:1' or '0,4,1K:1G'")
    sizes = []
    for item in spec.split(","):
        if not item.strip():  # as strtok in the C parser: empty items are skipped
            continue
        parts = item.strip().split(":")
        if len(parts) > 3:
            raise UsageError(
                f"invalid --sizes item '{item}': expected N, LO:HI (powers of two) "
                "or LO:HI:STEP (linear)")
        nums = [parse_size(p, spec) for p in parts]
        if len(nums) == 1:
            sizes.append(nums[0])
            continue
        lo, hi = nums[0], nums[1]
        if lo > hi:
            raise UsageError(f"invalid --sizes item '{item}': LO ({lo}) is greater than HI ({hi})")
        if len(nums) == 3:
            step = nums[2]
            if step == 0:
                raise UsageError(f"invalid --sizes item '{item}': STEP must be at least 1")
            if (hi - lo) // step + 1 > MAX_POINTS:
                raise UsageError(f"--sizes item '{item}' has more than {MAX_POINTS} points")
            sizes.extend(range(lo, hi + 1, step))
        else:
            if lo == 0:
                sizes.append(0)
            p = lo or 1
            while p <= hi:
                sizes.append(p)
                p <<= 1
        if len(sizes) > MAX_POINTS:
            raise UsageError(f"--sizes '{spec}' has more than {MAX_POINTS} points")
    if not sizes:
        raise UsageError(f"--sizes '{spec}' gives no size: expected e.g. '0:1K' or '1:1024:1'")
    return sizes


def human(n: int) -> str:
    """1024 -> '1K', 1536 -> '1536', as the seed's axes and the specs write sizes."""
    for suffix, mult in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= mult and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)
