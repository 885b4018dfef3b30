"""What `jostle scan` is given: its hosts (--hosts, --hostfile, the job's nodes) and the faults a
simulated scan plants (--inject), checked (exit 2, the value named)."""

from __future__ import annotations

import math
import re

from ...errors import UsageError, read_input

HOST_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
INJECT_KINDS = ("bandwidth", "latency")


def check_hosts(hosts, allowed=None, where="--hosts") -> list:
    """HOSTS as given, refused (exit 2, the value named) when fewer than two, repeated, not a
    plain host name (it becomes part of a file name), or not among ALLOWED (the job's nodes)."""
    hosts = [h.strip() for h in hosts if h.strip()]
    if len(hosts) < 2:
        raise UsageError(f"{where} '{','.join(hosts)}': a scan needs at least 2 hosts "
                         "(it compares each node with the others)")
    for h in hosts:
        if not HOST_RE.match(h):
            raise UsageError(f"{where}: host '{h}' is not allowed; expected a host name of "
                             "letters, digits, '.', '-' and '_'")
    dup = sorted({h for h in hosts if hosts.count(h) > 1})
    if dup:
        raise UsageError(f"{where}: host '{dup[0]}' is named twice; each host once")
    if allowed is not None:
        unknown = [h for h in hosts if h not in allowed]
        if unknown:
            raise UsageError(f"{where}: unknown host '{unknown[0]}': not in this allocation; "
                             f"allowed: {', '.join(allowed)}")
    return hosts


def read_hostfile(path) -> list:
    """One host per line (`host slots=N` and `host:N` read as host; # starts a comment)."""
    text = read_input(path, "--hostfile")
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(line.split()[0].split(":")[0])
    return out


def parse_inject(text, nodes, fabric=None, metrics=()) -> tuple:
    """'link:I:bandwidth=F' or 'link:I:latency=F' -> (I, kind, F): node I's link at F times the
    platform's bandwidth (or latency); 'link:A-B:KIND=F' -> ((child, parent), kind, F): the
    cable between switches A and B of FABRIC, both ways; 'node:I:METRIC=F' -> (I, METRIC, F):
    node I's fingerprint METRIC (one of METRICS) at F times its draw."""
    m = re.match(r"^(link|node):([^:]+):([a-z_]+)=([0-9.eE+-]+)$", text or "")
    if not m:
        raise UsageError(f"--inject '{text}' is not allowed; expected link:I:bandwidth=F, "
                         "link:I:latency=F, link:SWITCH-SWITCH:KIND=F with --topology-conf, "
                         "or node:I:METRIC=F")
    what, target, kind = m.group(1), m.group(2), m.group(3)
    kinds = INJECT_KINDS if what == "link" else tuple(metrics)
    if kind not in kinds:
        raise UsageError(f"--inject '{text}': unknown kind '{kind}'; allowed: "
                         f"{', '.join(kinds)}")
    if what == "node" and not target.isdigit():
        raise UsageError(f"--inject '{text}': '{target}' is not a node number")
    if target.isdigit():
        where = int(target)
        if where >= nodes:
            raise UsageError(f"--inject '{text}': node {where} does not exist; allowed: 0 to "
                             f"{nodes - 1}")
    elif fabric is None:
        raise UsageError(f"--inject '{text}': '{target}' is not a node number; a cable "
                         "(SWITCH-SWITCH) needs --topology-conf")
    else:
        where = fabric.cable_named(target, f"--inject '{text}'")
    try:
        f = float(m.group(4))
    except ValueError:
        f = math.nan
    if not (f > 0 and math.isfinite(f)):
        raise UsageError(f"--inject '{text}': factor '{m.group(4)}' is not allowed; expected a "
                         "number > 0")
    return where, kind, f
