"""The machine as a picture (cores grouped by NUMA node and package, NICs attached to their
node) and memory-latency matrices as heat maps, for `jostle topo` and the report.

Not a benchmark's figure module: it has no build(runs); `jostle topo` and `jostle run` call
machine_figure() on the JSON of `jostle-bench --topo`, and draw_links() on the links that
analysis/topo_links.py infers from a memory-latency matrix.
"""

from __future__ import annotations

import math
import os
from typing import Iterable, Sequence

from . import mpl_figure, np, patches


NIC_COLOR, NODE_COLOR, CORE_COLOR, HOME_COLOR = "#f0a030", "#dce8f5", "#4a78b0", "#f6d9a8"


def _gib(b):
    return f"{b / 2**30:.0f} GiB" if b else "? GiB"


def machine_figure(topo: dict, advice: dict | None = None, title: str | None = None) -> mpl_figure.Figure:
    """Boxes: one per NUMA node (its memory, its cores as small squares, numbered), grouped
    left to right by package; under each node the NICs attached to it (name, PCI id, link);
    NICs of unknown locality on the right. ADVICE (jostle-bench --place) marks the comm
    threads' cores and the home node."""
    nodes = topo.get("numa_nodes") or []
    nics = (topo.get("machine") or {}).get("nics") or []
    comm = {t["core"]: t["thread"] for t in (advice or {}).get("threads") or []}
    home = (advice or {}).get("home_numa")
    per_row = max(1, min(4, len(nodes)))
    ncores = max([len(n.get("cores") or []) for n in nodes] + [1])
    cols = min(ncores, 6)
    rows_in = -(-ncores // cols)
    w_node, h_node = 0.5 * cols + 0.9, 0.45 * rows_in + 0.75
    nic_h = 0.55
    grid_rows = -(-len(nodes) // per_row)
    cell_h = h_node + nic_h * (1 + max([sum(1 for x in nics if x.get("numa") == n["index"])
                                        for n in nodes] + [0])) + 0.3
    orphans = [x for x in nics if x.get("numa") is None]
    width = per_row * (w_node + 0.4) + (2.6 if orphans else 0.2)
    height = grid_rows * cell_h + 0.8
    # Sized to what it holds (tight bounding box): a small machine is a small picture with
    # labels at reading size, not a wide empty frame.
    fig = mpl_figure.Figure(figsize=(width * 1.1, max(2.0, height * 1.1)))
    ax = fig.add_subplot(1, 1, 1)
    for k, n in enumerate(nodes):
        x0 = (k % per_row) * (w_node + 0.4) + 0.2
        y0 = height - 0.6 - (k // per_row + 1) * cell_h + cell_h - h_node
        face = HOME_COLOR if home == n["index"] else NODE_COLOR
        ax.add_patch(patches.FancyBboxPatch((x0, y0), w_node, h_node, boxstyle="round,pad=0.02",
                                    fc=face, ec="#345"))
        ax.text(x0 + 0.1, y0 + h_node - 0.22, f"NUMA {n['index']}  {_gib(n.get('memory_bytes'))}",
                fontsize=8, weight="bold", va="center")
        for i, c in enumerate(n.get("cores") or []):
            cx = x0 + 0.3 + (i % cols) * 0.5
            cy = y0 + h_node - 0.65 - (i // cols) * 0.45
            is_comm = c in comm
            ax.add_patch(patches.FancyBboxPatch((cx - 0.18, cy - 0.15), 0.36, 0.3,
                                        boxstyle="round,pad=0.01",
                                        fc=NIC_COLOR if is_comm else CORE_COLOR, ec="none"))
            ax.text(cx, cy, str(c), color="white", fontsize=8, ha="center", va="center")
        below = [x for x in nics if x.get("numa") == n["index"]]
        for j, nic in enumerate(below):
            ny = y0 - (j + 1) * nic_h
            ax.plot([x0 + w_node / 2] * 2, [y0, ny + 0.4], color="#555", lw=1, zorder=0)
            _nic_box(ax, x0 + 0.1, ny, w_node - 0.2, nic)
    for j, nic in enumerate(orphans):
        _nic_box(ax, per_row * (w_node + 0.4) + 0.3, height - 1.2 - j * nic_h, 2.2, nic)
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")
    m = topo.get("machine") or {}
    ax.set_title(title or f"{m.get('cpu', '?')}: {m.get('cores', '?')} cores, "
                 f"{len(nodes)} NUMA node(s), {len(nics)} NIC(s)"
                 + ("" if m.get("this_system", True) else f"  [{m.get('topology')}]"),
                 fontsize=9)
    if comm:
        ax.text(0.2, 0.1, "orange cores: communication threads\n(jostle place --comm);\n"
                "shaded node: the NICs' home node", fontsize=7.5, color="#444", va="bottom")
    return fig


def _nic_box(ax, x, y, w, nic):
    ax.add_patch(patches.FancyBboxPatch((x, y), w, 0.4, boxstyle="round,pad=0.02", fc=NIC_COLOR,
                                ec="#7a4a00"))
    link = f" {nic['link_gbps']:.2f} GB/s" if nic.get("link_gbps") else ""
    ax.text(x + 0.08, y + 0.2, f"{nic.get('name')}\n{nic.get('pci') or ''}{link}", fontsize=7.5,
            va="center", linespacing=1.0)


def saved(directory):
    """(matplotlib Figure of the machine, advice lines) from the topo.json and placement.json that
    `jostle run` saved in DIRECTORY, or None when it has none."""
    import json
    from pathlib import Path
    d = Path(directory)
    try:
        topo = json.loads((d / "topo.json").read_text())
        adv = json.loads((d / "placement.json").read_text())
    except (OSError, ValueError):
        return None
    lines = [f"home node: {adv.get('why')}"]
    lines += [f"comm thread {t['thread']}: core {t['core']}, buffers on NUMA node "
              f"{t['numa'] if t.get('numa') is not None else '(first touch)'} — {t['why']}"
              for t in adv.get("threads") or []]
    lines.append("apply: jostle-bench BENCH --comm-core auto --comm-mem auto")
    lines += [f"not known: {u}" for u in adv.get("unknown") or []]
    return machine_figure(topo, adv), lines


def circle_layout(n: int) -> np.ndarray:
    """n points on the unit circle, node 0 at the top, clockwise."""
    ang = math.pi / 2 - 2 * math.pi * np.arange(n) / n
    return np.stack([np.cos(ang), np.sin(ang)], axis=1)


def draw_links(links: Sequence[tuple[int, int]], n: int, path,
               labels: Sequence[str] | None = None,
               highlight: Iterable[int] = (),
               edge_labels: dict | None = None,
               title: str | None = None) -> str:
    """Draw the inferred graph to a PNG (matplotlib Agg canvas, no pyplot,
    no networkx).  ``highlight``: nodes drawn in another colour (e.g. the
    NUMA node of the NIC).  ``edge_labels``: {(i, j): text}.  Returns the
    path written."""
    from matplotlib.figure import Figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    pos = circle_layout(n)
    hl = set(highlight)
    labels = list(labels) if labels is not None else ["%d" % i for i in range(n)]
    fig = Figure(figsize=(4.5, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for i, j in links:
        ax.plot([pos[i, 0], pos[j, 0]], [pos[i, 1], pos[j, 1]],
                color="0.35", lw=1.5, zorder=1)
        if edge_labels and (i, j) in edge_labels:
            mx, my = (pos[i] + pos[j]) / 2
            ax.text(mx, my, str(edge_labels[(i, j)]), fontsize=7,
                    ha="center", va="center", zorder=3,
                    bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none"))
    colors = ["tab:orange" if i in hl else "tab:blue" for i in range(n)]
    ax.scatter(pos[:, 0], pos[:, 1], s=600, c=colors, zorder=2,
               edgecolors="black")
    for i in range(n):
        ax.text(pos[i, 0], pos[i, 1], labels[i], ha="center", va="center",
                color="white", fontsize=10, fontweight="bold", zorder=4)
    ax.set_xlim(-1.35, 1.35)
    ax.set_ylim(-1.35, 1.35)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title or "%d links inferred" % len(links), fontsize=10)
    path = os.fspath(path)
    fig.savefig(path, format="png")
    return path
