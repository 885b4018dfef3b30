"""How a study's typed settings become jostle-bench's flags, and the checks every sweep makes
before it is planned (its largest message in this host's memory)."""

import hashlib
import json
import os

from ..errors import UsageError
from ..sizes import human


def pass_through(settings, names) -> list:
    """The jostle-bench options NAMES (as it spells them) that SETTINGS has: a flag when true, an
    option and its value when given."""
    out = []
    for name in names:
        v = getattr(settings, name.replace("-", "_"), None)
        if v is True:
            out.append("--" + name)
        elif v not in (None, False):
            out += ["--" + name, str(v)]
    return out


def given_over(base, settings, names) -> list:
    """jostle-bench flags BASE (e.g. --quick's) with each option of NAMES the user gave
    (settings.min_reps -> --min-reps V) in place of BASE's value: an explicit option wins."""
    out = list(base)
    for name in names:
        v = getattr(settings, name, None)
        if v is not None:
            flag = "--" + name.replace("_", "-")
            if flag in out:
                del out[out.index(flag):out.index(flag) + 2]
            out += [flag, str(v)]
    return out


def memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def check_memory(sizes, ranks_per_host, buffers=1, option="--sizes", spec=""):
    """Refuse a sweep whose largest message cannot fit in this host's memory."""
    mem = memory_bytes()
    if not mem or not sizes:
        return
    biggest = max(sizes)
    need = biggest * ranks_per_host * buffers
    if need > mem:
        allowed = mem // (ranks_per_host * buffers)
        raise UsageError(
            f"{option} '{spec}': the largest size {human(biggest)} ({biggest} B) × "
            f"{ranks_per_host} rank(s) × {buffers} buffer(s) exceeds this host's memory "
            f"({mem / 2**30:.1f} GiB); allowed: sizes up to {human(allowed)} ({allowed} B)")


def default_name(prefix, run_args, ranks=None, hosts=()) -> str:
    """PREFIX and a short hash of what is measured: the same command resumes its own run,
    and a run of other options never takes its place (no clock in the name)."""
    key = json.dumps([list(map(str, run_args)), ranks, list(hosts or [])])
    return f"{prefix}-{hashlib.sha1(key.encode()).hexdigest()[:8]}"
