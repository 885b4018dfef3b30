"""The fabric a scan ran on: SLURM's topology.conf (topology/tree), read into switches, the
cables between them, and the route of each pair of nodes (docs/scan.md, "The fabric").

    SwitchName=leaf0 Nodes=node-[0-15]
    SwitchName=spine0 Switches=leaf[0-15] LinkSpeed=100

Each line names a switch and its children: nodes (Nodes=) or switches (Switches=), in SLURM's
hostlist expressions (tux[0-3,12,18-20]). A switch under several parents (the spines of a fat
tree) is allowed; a cycle, a child switch no line defines, or a node under no switch is not.
LinkSpeed (relative) is kept and unused.

Routes are up*/down* with destination-mod-k spreading (the usual fat-tree routing, D-mod-k:
Zahavi et al., "Optimized InfiniBand fat-tree routing for shift all-to-all communication
patterns", 2010): from the source's switch up, at each step to the parent numbered (index of
the destination) mod (parents that reach it), until a switch above the destination; then
down, the same way. The simulated fabric is built with these routes, and a real fabric is
assumed to route so: on a tree (one parent each) every route is the only one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import UsageError, read_input

_RANGE = re.compile(r"^([0-9]+)(?:-([0-9]+))?$")


def expand_hostlist(expr: str, where: str = "") -> list:
    """SLURM's hostlist expression: 'a[0-2,5],b' -> ['a0', 'a1', 'a2', 'a5', 'b']; zero
    padding kept (n[01-03] -> n01 n02 n03); several brackets in one name multiply."""
    out, depth, item = [], 0, ""
    for ch in expr + ",":
        if ch == "," and depth == 0:
            if item.strip():
                out += _expand_one(item.strip(), where)
            item = ""
            continue
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if depth < 0 or depth > 1:
            raise UsageError(f"{where}'{expr}' is not a hostlist expression; expected e.g. "
                             "node[0-15],spare1")
        item += ch
    if depth:
        raise UsageError(f"{where}'{expr}' is not a hostlist expression (a '[' is not closed)")
    return out


def _expand_one(name, where):
    m = re.search(r"\[([^\]]*)\]", name)
    if not m:
        return [name]
    head, tail = name[:m.start()], name[m.end():]
    out = []
    for part in m.group(1).split(","):
        r = _RANGE.match(part.strip())
        if not r:
            raise UsageError(f"{where}'{name}': range '{part}' is not allowed; expected N or "
                             "LO-HI")
        lo, hi = r.group(1), r.group(2) or r.group(1)
        if int(hi) < int(lo) or int(hi) - int(lo) > 1 << 20:
            raise UsageError(f"{where}'{name}': range '{part}' is not allowed; expected LO <= HI")
        width = len(lo) if lo.startswith("0") and len(lo) > 1 else 0
        for i in range(int(lo), int(hi) + 1):
            out += _expand_one(f"{head}{str(i).zfill(width)}{tail}", where)
    return out


@dataclass
class Fabric:
    """Switches (name -> their child switches, their nodes), each switch's parents, each
    node's switch, the nodes in the file's order."""
    source: str
    children: dict = field(default_factory=dict)     # switch -> [child switches]
    nodes_of: dict = field(default_factory=dict)     # switch -> [nodes]
    speed: dict = field(default_factory=dict)        # switch -> LinkSpeed (or None)
    parents: dict = field(default_factory=dict)      # switch -> [parent switches]
    leaf: dict = field(default_factory=dict)         # node -> its switch
    nodes: list = field(default_factory=list)
    under: dict = field(default_factory=dict)        # switch -> set of nodes under it
    reach: dict = field(default_factory=dict)        # switch -> nodes reachable up then down

    def cables(self) -> list:
        """Every switch-to-switch cable, (child, parent), in the file's order."""
        return [(c, p) for p in self.children for c in self.children[p]]

    def index(self) -> dict:
        return {h: i for i, h in enumerate(self.nodes)}

    def route(self, src, dst, di) -> list:
        """The cables from SRC's switch to DST's, each (child, parent, 'up' or 'down'), up then
        down; DI the destination's index (which parent or child among several)."""
        cur, target, path = self.leaf[src], self.leaf[dst], []
        while dst not in self.under[cur]:
            ups = [p for p in self.parents[cur] if dst in self.reach[p]]
            nxt = ups[di % len(ups)]
            path.append((cur, nxt, "up"))
            cur = nxt
        while cur != target:
            downs = [c for c in self.children[cur] if dst in self.under[c]]
            nxt = downs[di % len(downs)]
            path.append((nxt, cur, "down"))
            cur = nxt
        return path

    def check_hosts(self, hosts, simulated=False):
        """Refuses (exit 2) a scanned host under no switch, a fabric that does not connect the
        hosts, and with SIMULATED a node of the file that is not one of HOSTS."""
        known = set(hosts)
        if simulated:
            unknown = [h for h in self.nodes if h not in known]
            if unknown:
                raise UsageError(f"{self.source}: unknown node '{unknown[0]}': the simulated nodes "
                                 f"are {hosts[0]} to {hosts[-1]}")
        missing = [h for h in hosts if h not in self.leaf]
        if missing:
            raise UsageError(f"{self.source}: host '{missing[0]}' is under no switch; every "
                             "scanned host needs one (SwitchName=… Nodes=…)")
        first = self.reach[self.leaf[hosts[0]]]
        apart = [h for h in hosts if h not in first]
        if apart:
            raise UsageError(f"{self.source}: hosts '{hosts[0]}' and '{apart[0]}' are not "
                             "connected by any switch; a scan needs one fabric")

    def cable_named(self, text, where) -> tuple:
        """'A-B' (either order; names may hold '-') -> the cable (child, parent)."""
        for i, ch in enumerate(text):
            if ch == "-":
                a, b = text[:i], text[i + 1:]
                for c, p in ((a, b), (b, a)):
                    if c in self.children.get(p, ()):
                        return c, p
        raise UsageError(f"{where}: '{text}' is not a cable of {self.source}; expected "
                         f"SWITCH-SWITCH, e.g. {'-'.join(self.cables()[0]) if self.cables() else 'leaf0-spine0'}")


def parse_topology(text: str, source: str) -> Fabric:
    """FABRIC of topology.conf TEXT (SOURCE names it in messages); bad input exits 2."""
    f = Fabric(source)
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{source} line {lineno}: "
        kv = {}
        for tok in line.split():
            k, sep, v = tok.partition("=")
            if not sep or not v:
                raise UsageError(f"{where}'{tok}' is not allowed; expected KEY=VALUE "
                                 "(SwitchName=, Switches=, Nodes=, LinkSpeed=)")
            kv[k.lower()] = v
        name = kv.pop("switchname", None)
        if name is None:
            raise UsageError(f"{where}no SwitchName=; each line names a switch")
        if name in f.children:
            raise UsageError(f"{where}switch '{name}' is defined twice")
        unknown = sorted(set(kv) - {"switches", "nodes", "linkspeed"})
        if unknown:
            raise UsageError(f"{where}'{unknown[0]}=' is not allowed; expected Switches=, "
                             "Nodes= or LinkSpeed=")
        f.children[name] = expand_hostlist(kv.get("switches", ""), where)
        f.nodes_of[name] = expand_hostlist(kv.get("nodes", ""), where)
        f.speed[name] = kv.get("linkspeed")
        for n in f.nodes_of[name]:
            if n not in f.leaf:
                f.leaf[n] = name
                f.nodes.append(n)
    if not f.children:
        raise UsageError(f"{source}: no switch; expected lines SwitchName=S Nodes=… or "
                         "SwitchName=S Switches=…")
    f.parents = {s: [] for s in f.children}
    for p, kids in f.children.items():
        for c in kids:
            if c not in f.children:
                raise UsageError(f"{source}: switch '{p}' names unknown switch '{c}'; every "
                                 "switch in Switches= needs its own SwitchName= line")
            f.parents[c].append(p)
    _check_acyclic(f)
    for s in _bottom_up(f):
        f.under[s] = set(f.nodes_of[s]).union(*(f.under[c] for c in f.children[s]))
    for s in reversed(_bottom_up(f)):   # top down: what a switch's ancestors reach
        f.reach[s] = set(f.under[s]).union(*(f.reach[p] for p in f.parents[s]))
    return f


def _check_acyclic(f):
    state = {}

    def visit(s, path):
        state[s] = 1
        for c in f.children[s]:
            if state.get(c) == 1:
                cyc = path[path.index(c):] + [c] if c in path else [s, c]
                raise UsageError(f"{f.source}: switches {' -> '.join(cyc)} form a cycle; a "
                                 "topology is a tree (or a fat tree) of switches")
            if not state.get(c):
                visit(c, path + [c])
        state[s] = 2
    for s in f.children:
        if not state.get(s):
            visit(s, [s])


def _bottom_up(f) -> list:
    out, seen = [], set()

    def visit(s):
        seen.add(s)
        for c in f.children[s]:
            if c not in seen:
                visit(c)
        out.append(s)
    for s in f.children:
        if s not in seen:
            visit(s)
    return out


def read_topology(path) -> Fabric:
    text = read_input(path, "--topology-conf")
    return parse_topology(text, f"--topology-conf '{path}'")


def fat_tree_text(nodes, leaves, spines, prefix="node-") -> str:
    """A two-level fat tree in topology.conf's format: LEAVES switches of NODES/LEAVES nodes
    each, every leaf under each of SPINES spines (for tests and bench/scan_targets.py)."""
    per = -(-nodes // leaves)
    lines = [f"SwitchName=leaf{i} Nodes={prefix}[{i * per}-{min(nodes, (i + 1) * per) - 1}]"
             for i in range(leaves) if i * per < nodes]
    lines += [f"SwitchName=spine{j} Switches=leaf[0-{len(lines) - 1}]" for j in range(spines)]
    return "\n".join(lines) + "\n"
