"""How numbers are shown to people: one unit per quantity (GB/s, µs), digits that read at a
glance (a run's headline, results.Run.headline, is made of them). Records keep jostle-bench's
units; only what is printed or drawn is converted, here, so the terminal, the tables and the
figures agree."""

import math

from .sizes import human

# Record unit -> (shown unit, factor). Bandwidths in GB/s and times in µs everywhere.
SHOWN = {"MB/s": ("GB/s", 1e-3), "us": ("µs", 1.0), "B/s": ("GB/s", 1e-9)}

def shown(value, unit):
    """(value, unit) in the unit a person reads for that quantity."""
    to, factor = SHOWN.get(unit, (unit, 1.0))
    return value * factor, to


def shown_frame(df, cols=("min", "p25", "median", "p75", "p99", "max", "mean", "stddev",
                            "ci95_lo", "ci95_hi", "jobs_lo", "jobs_hi")):
    """A points frame with its statistics and 'unit' column in the units people read."""
    if "unit" not in df:
        return df
    out = df.copy()
    for unit, (to, factor) in SHOWN.items():
        rows = out["unit"] == unit
        if rows.any():
            for c in (c for c in cols if c in out):
                out.loc[rows, c] = out.loc[rows, c] * factor
            out.loc[rows, "unit"] = to
    return out


def number(v, digits=3) -> str:
    """15 650, 8.54, 0.195, 3.2e-16: DIGITS significant digits, thin spaces between thousands,
    an exponent only for the very small (a residual) or very large."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "" if v is None else str(v)
    if not math.isfinite(f):
        return "–"
    if f == 0:
        return "0"
    if abs(f) < 1e-3 or abs(f) >= 1e9:
        return f"{f:.{digits - 1}e}"
    if abs(f) >= 10 ** digits:   # whole numbers in full: 15 650, not 15 600
        return f"{round(f):,}".replace(",", "\u202f")
    f = float(f"{f:.{digits}g}")   # 9.9996 is 10.0, not 10.00
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(f))))
    return f"{f:,.{decimals}f}".replace(",", "\u202f")


def duration(seconds) -> str:
    """12 s, 3 min 05 s, 1:02:03."""
    m, s = divmod(round(seconds), 60)
    return f"{m // 60}:{m % 60:02d}:{s:02d}" if m >= 60 else f"{m} min {s:02d} s" if m else f"{s} s"


def quantity(value, unit) -> str:
    v, u = shown(value, unit)
    return f"{number(v)} {u}" if u not in ("", "1") else number(v)


def size_label(n) -> str:
    """0 B, 1000 B, 4 KiB, 64 MiB."""
    h = human(int(n))
    return f"{h[:-1]} {h[-1]}iB" if h[-1].isalpha() else f"{h} B"


def where(row) -> str:
    size = row.get("size")
    return f" at {size_label(size)}" if size is not None and size == size else ""
