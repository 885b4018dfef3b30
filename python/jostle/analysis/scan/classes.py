"""The node classes of `jostle scan` (docs/scan.md, "Node classes"): groups of nodes a site
knows to differ (newer firmware, another CPU), each judged against its own null, so that a
faster half of an allocation does not make the other half look slow (issue 45: half of 64
nodes 15% faster named some of the other half in 86% of scans).

From --groups 'NAME=PATTERN,PATTERN;NAME=…' or from the classes of the site file of `jostle
check` (its [class.NAME] hosts); a pattern is a glob, or /a regular expression/, as there."""

from __future__ import annotations

import fnmatch
import re

from ...errors import UsageError

NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _matches(pattern, host) -> bool:
    if len(pattern) > 1 and pattern.startswith("/") and pattern.endswith("/"):
        return re.search(pattern[1:-1], host) is not None
    return fnmatch.fnmatchcase(host, pattern)


def parse_groups(text) -> dict:
    """{name: [patterns]} of --groups TEXT (exit 2 naming what is wrong)."""
    out = {}
    for part in (text or "").split(";"):
        name, eq, pats = part.partition("=")
        name, pats = name.strip(), [p.strip() for p in pats.split(",") if p.strip()]
        if not eq or not NAME_RE.match(name) or not pats:
            raise UsageError(f"--groups '{text}': '{part.strip()}' is not allowed; expected "
                             "NAME=PATTERN[,PATTERN…] separated by ';' (a name of letters, "
                             "digits, '_' and '-'; a pattern a glob or /regex/)")
        if name in out:
            raise UsageError(f"--groups '{text}': class '{name}' is named twice; each once")
        for p in pats:
            if p.startswith("/") and p.endswith("/") and len(p) > 1:
                try:
                    re.compile(p[1:-1])
                except re.error as e:
                    raise UsageError(f"--groups '{text}': pattern '{p}' is not a regular "
                                     f"expression ({e})") from None
        out[name] = pats
    return out


def classes_of(hosts, groups, where="--groups") -> dict:
    """{host: class} of HOSTS under GROUPS ({name: [patterns]}: the first class that matches);
    a host no class matches is refused (exit 2), so that no node is judged against a class it
    does not belong to."""
    out = {}
    for h in hosts:
        name = next((n for n, pats in groups.items() if any(_matches(p, h) for p in pats)), None)
        if name is None:
            raise UsageError(f"{where}: host '{h}' is in no class; allowed classes: "
                             + ", ".join(f"{n} {pats}" for n, pats in groups.items()))
        out[h] = name
    return out


def by_class(hosts, classes) -> list:
    """HOSTS in groups of one class each (in the order of their first host), all of them as
    one where CLASSES ({host: class}) is None."""
    if not classes:
        return [list(hosts)]
    out = {}
    for h in hosts:
        out.setdefault(classes.get(h, ""), []).append(h)
    return list(out.values())
