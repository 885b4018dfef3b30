"""Infer the NUMA interconnect from a memory-latency matrix.

This is the topology-discovery method of Moreaud 2007 (seed 001, section
3.3.2): the cache-bypassing memory access time is measured from every
processor (row i) to every memory bank (column j).  Subtracting the local
access time gives the overhead of each remote access; on the 8-node Opteron
*Hagrid* the overheads are "mostly multiples of about 34 ns", one multiple
per HyperTransport link crossed, so the smallest overheads mark the direct
links: "22 minimal values, which correspond to the 11 links" (table 3.1).
Larger values show asymmetries (the route from x to y is not the route
from y to x) and "half multiples" (request and answer take different paths).

Functions
---------
read_matrix_csv(path)             -> n x n float array (ns)
overhead_table(m, unit=...)       -> overhead over local access (ns or %)
minimal_entries(m, rel_tol)       -> directed (i, j) entries within tolerance
                                     of the minimal remote overhead
infer_links(m, rel_tol, method)   -> (links, hops, levels)
level_mismatches(hops, levels)    -> pairs whose measured level is not the
                                     BFS hop count of the inferred graph
asymmetric_pairs(m, tol)          -> pairs with |m[i][j] - m[j][i]| > tol

Pure Python + numpy; figures/topo.py draws the inferred graph (draw_links), and
`jostle topo --matrix FILE.csv [--graph FILE.png]` prints the report.  The matrix may be
absolute latencies (local access on the diagonal) or already an overhead
table (zeros on the diagonal, like table 3.1): everything works on the
overhead m[i][j] - m[i][i].
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections import deque
from typing import Iterable
from .. import lazy
np = lazy.module("numpy")


__all__ = [
    "read_matrix_csv", "overhead_table", "minimal_entries", "infer_links",
    "link_cost", "bfs_hops", "level_mismatches", "asymmetric_pairs",
    "format_table",
]

DEFAULT_REL_TOL = 0.25


# ---------------------------------------------------------------------------
# input
# ---------------------------------------------------------------------------

def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_matrix_csv(path_or_file) -> np.ndarray:
    """Read a square latency matrix from CSV.

    Accepts ',', ';', tab or whitespace separators, '#' comment lines,
    blank lines, an optional header row (e.g. ``,M0,M1,...``) and an
    optional first column of row labels (e.g. ``C0``).  Raises ValueError
    on a non-square or non-numeric matrix.
    """
    if hasattr(path_or_file, "read"):
        text = path_or_file.read()
    else:
        with open(os.fspath(path_or_file), encoding="utf-8") as fh:
            text = fh.read()
    lines = [ln.strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]
    if not lines:
        raise ValueError("empty matrix file")
    sample = lines[-1]
    if "," in sample:
        delim = ","
    elif ";" in sample:
        delim = ";"
    elif "\t" in sample:
        delim = "\t"
    else:
        delim = None
    if delim is None:
        rows = [ln.split() for ln in lines]
    else:
        rows = [[c.strip() for c in r] for r in csv.reader(io.StringIO("\n".join(lines)),
                                                          delimiter=delim)]
    # header row: any non-numeric cell after the first column
    if rows and any(c and not _is_number(c) for c in rows[0][1:]):
        rows = rows[1:]
    # row labels: first cell of every row non-numeric (or empty)
    if rows and all((not r[0]) or not _is_number(r[0]) for r in rows):
        rows = [r[1:] for r in rows]
    rows = [[c for c in r if c != ""] for r in rows]
    n = len(rows)
    if n == 0 or any(len(r) != n for r in rows):
        raise ValueError("latency matrix is not square: %s"
                         % [len(r) for r in rows])
    try:
        m = np.array([[float(c) for c in r] for r in rows], dtype=float)
    except ValueError as exc:
        raise ValueError("non-numeric cell in latency matrix: %s" % exc) from None
    if not np.all(np.isfinite(m)):
        raise ValueError("latency matrix has NaN or infinite values")
    return m


def _as_matrix(matrix) -> np.ndarray:
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 2:
        raise ValueError("expected an n x n matrix with n >= 2, got shape %s"
                         % (m.shape,))
    if not np.all(np.isfinite(m)):
        raise ValueError("matrix has NaN or infinite values")
    return m


def _overhead_ns(matrix) -> np.ndarray:
    m = _as_matrix(matrix)
    d = m - np.diag(m)[:, None]
    off = ~np.eye(len(m), dtype=bool)
    if np.any(d[off] <= 0):
        i, j = np.argwhere((d <= 0) & off)[0]
        raise ValueError("remote access %d->%d is not slower than local "
                         "(%g <= %g)" % (i, j, m[i, j], m[i, i]))
    return d


# ---------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------

def overhead_table(matrix, unit: str = "percent", local=None) -> np.ndarray:
    """Overhead of every access over the local access of the same row.

    unit="ns":      m[i][j] - m[i][i]   (the unit of table 3.1 of seed 001)
    unit="percent": 100 * (m[i][j] - m[i][i]) / m[i][i]

    When ``matrix`` is already an overhead table (zero diagonal, as table
    3.1), percentages need the local latency: pass ``local`` (a scalar or
    one value per row, in ns).
    """
    m = _as_matrix(matrix)
    diag = np.diag(m).copy()
    if local is not None:
        loc = np.broadcast_to(np.asarray(local, dtype=float), diag.shape).copy()
        if np.any(diag != 0):
            raise ValueError("'local' only applies to an overhead table "
                             "(zero diagonal)")
        m = m + loc[:, None]
        diag = loc
    d = m - diag[:, None]
    if unit == "ns":
        return d
    if unit == "percent":
        if np.any(diag <= 0):
            raise ValueError("percent overhead needs a positive local latency; "
                             "pass local= for an overhead table")
        return 100.0 * d / diag[:, None]
    raise ValueError("unit must be 'ns' or 'percent', not %r" % (unit,))


def format_table(table, row_prefix: str = "C", col_prefix: str = "M",
                 fmt: str = "{:.0f}") -> str:
    """Plain-text rendering of an n x n table, like table 3.1."""
    t = np.asarray(table)
    n = t.shape[0]
    cells = [[""] + ["%s%d" % (col_prefix, j) for j in range(n)]]
    for i in range(n):
        cells.append(["%s%d" % (row_prefix, i)] + [fmt.format(v) for v in t[i]])
    width = max(len(c) for row in cells for c in row)
    return "\n".join(" ".join(c.rjust(width) for c in row) for row in cells)


# ---------------------------------------------------------------------------
# inference
# ---------------------------------------------------------------------------

def minimal_entries(matrix, rel_tol: float = DEFAULT_REL_TOL) -> list[tuple[int, int]]:
    """Directed entries (i, j), i != j, whose overhead is within ``rel_tol``
    of the minimal remote overhead: overhead <= min * (1 + rel_tol).
    On table 3.1 these are the 22 "minimal values" of section 3.3.2."""
    if rel_tol < 0:
        raise ValueError("rel_tol must be >= 0")
    d = _overhead_ns(matrix)
    n = len(d)
    off = ~np.eye(n, dtype=bool)
    thr = d[off].min() * (1.0 + rel_tol)
    return [(int(i), int(j)) for i, j in np.argwhere((d <= thr) & off)]


def link_cost(matrix, rel_tol: float = DEFAULT_REL_TOL) -> float:
    """Cost of one link: the median overhead of the minimal entries
    (about 34-35 ns on Hagrid)."""
    d = _overhead_ns(matrix)
    return float(np.median([d[i, j] for i, j in minimal_entries(d, rel_tol)]))


def bfs_hops(links: Iterable[tuple[int, int]], n: int) -> np.ndarray:
    """Hop counts of the undirected graph; -1 where unreachable."""
    adj = [[] for _ in range(n)]
    for i, j in links:
        adj[i].append(j)
        adj[j].append(i)
    hops = np.full((n, n), -1, dtype=int)
    for s in range(n):
        hops[s, s] = 0
        q = deque([s])
        while q:
            u = q.popleft()
            for v in adj[u]:
                if hops[s, v] < 0:
                    hops[s, v] = hops[s, u] + 1
                    q.append(v)
    return hops


def infer_links(matrix, rel_tol: float = DEFAULT_REL_TOL, method: str = "min",
                require_both: bool = True):
    """Infer the direct links between NUMA nodes from a latency matrix.

    method="min" (the seed's method, sec. 3.3.2): a pair is a link when its
    overhead is within ``rel_tol`` of the minimal remote overhead, in both
    directions (``require_both``, the symmetry the seed observes) or in
    either.  Right for machines whose links all cost the same (HyperTransport
    meshes, rings, ladders).

    method="additive": a pair (i, j) is a link unless some node k explains
    it as a two-leg path: d[i][k] + d[k][j] <= d[i][j] * (1 + rel_tol), with
    both legs clearly shorter than d[i][j] (<= d[i][j] * (1 - rel_tol)).
    Uses the symmetrised overhead (d + d^T) / 2.  Needed when links have
    different costs (e.g. sub-NUMA clusters: cheap on-die mesh, costly UPI),
    where "min" only finds the cheapest class.

    Returns (links, hops, levels):
      links  sorted list of (i, j) with i < j;
      hops   n x n int array of BFS hop counts on the inferred graph
             (-1 where the graph does not connect i to j);
      levels n x n float array: overhead / link_cost, i.e. the number of
             links the measurement suggests (compare with hops through
             level_mismatches).
    """
    if rel_tol < 0 or rel_tol >= 1:
        raise ValueError("rel_tol must be in [0, 1)")
    d = _overhead_ns(matrix)
    n = len(d)
    if method == "min":
        directed = set(minimal_entries(d, rel_tol))
        links = set()
        for i, j in directed:
            a, b = min(i, j), max(i, j)
            if not require_both or ((j, i) in directed):
                links.add((a, b))
    elif method == "additive":
        s = (d + d.T) / 2.0
        links = set()
        for i in range(n):
            for j in range(i + 1, n):
                dij = s[i, j]
                explained = False
                for k in range(n):
                    if k in (i, j):
                        continue
                    a, b = s[i, k], s[k, j]
                    if (a + b <= dij * (1.0 + rel_tol)
                            and max(a, b) <= dij * (1.0 - rel_tol)):
                        explained = True
                        break
                if not explained:
                    links.add((i, j))
    else:
        raise ValueError("method must be 'min' or 'additive', not %r" % (method,))
    links = sorted(links)
    hops = bfs_hops(links, n)
    levels = d / link_cost(d, rel_tol)
    np.fill_diagonal(levels, 0.0)
    return links, hops, levels


def level_mismatches(hops, levels, step: float = 0.5) -> list[tuple[int, int, int, float]]:
    """Directed pairs whose measured level, rounded to the nearest ``step``
    (0.5 keeps the seed's "half multiples"), differs from the BFS hop count:
    [(i, j, hops[i][j], levels[i][j]), ...].  Unreachable pairs (hops -1)
    are always reported.  On table 3.1 these are the entries explained by
    non-shortest HyperTransport routes (sec. 3.3.2)."""
    h = np.asarray(hops)
    lv = np.asarray(levels, dtype=float)
    out = []
    n = len(h)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            rounded = round(lv[i, j] / step) * step
            if h[i, j] < 0 or not math.isclose(rounded, h[i, j]):
                out.append((i, j, int(h[i, j]), float(lv[i, j])))
    return out


def asymmetric_pairs(matrix, tol: float | None = None,
                     rel_tol: float = DEFAULT_REL_TOL) -> list[tuple[int, int, float, float]]:
    """Pairs i < j with |m[i][j] - m[j][i]| > tol, on the overheads.

    tol defaults to ``rel_tol`` times the link cost (about 9 ns on
    Hagrid).  Returns [(i, j, d[i][j], d[j][i]), ...]."""
    d = _overhead_ns(matrix)
    if tol is None:
        tol = rel_tol * link_cost(d, rel_tol)
    n = len(d)
    return [(i, j, float(d[i, j]), float(d[j, i]))
            for i in range(n) for j in range(i + 1, n)
            if abs(d[i, j] - d[j, i]) > tol]
