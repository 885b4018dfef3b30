"""The options several commands share, each declared once with its environment variable, its
key in the site file and its fallback, as ReFrame's frontend/argparse.py pairs an option with
its envvar and configvar: a command adds one by name, and its value is found one way."""

import argparse
import os
from dataclasses import dataclass
from typing import Optional

from ..records import store


@dataclass(frozen=True)
class Shared:
    flag: str
    metavar: str
    envvar: str
    what: str                         # the help, before "(default: …)"
    site_key: Optional[str] = None    # the site file's [check] key that names it, if any
    fallback: Optional[str] = None    # the value when nothing names it


SHARED = {
    "db": Shared("--db", "DB", "JOSTLE_DB", "the results store: an SQLite file or "
                 "postgresql://…", site_key="store", fallback=str(store.DEFAULT_PATH)),
    "site": Shared("--site", "FILE", "JOSTLE_SITE", "the site file (docs/check.md): classes, "
                   "their hosts, references, and the [check] store"),
    "baselines": Shared("--baselines", "DIR", "JOSTLE_BASELINES", "where baselines are kept",
                        fallback="baselines"),
}


def add(p, name: str, what: Optional[str] = None, suppress: bool = False):
    """Option NAME of SHARED on parser (or group) P; WHAT: its help in this command, when it
    means more there; SUPPRESS: not set unless given (a subcommand beside its parent's)."""
    o = SHARED[name]
    default = ", ".join([f"${o.envvar}"]
                        + ([f"the site file's [check] {o.site_key}"] if o.site_key else [])
                        + ([f"else {o.fallback}"] if o.fallback else []))
    p.add_argument(o.flag, metavar=o.metavar, default=argparse.SUPPRESS if suppress else None,
                   help=f"{what or o.what} (default: {default})")


def given(args, name: str, explicit=None) -> tuple:
    """(value, where it came from) of option NAME: EXPLICIT or the flag's value, else its
    environment variable; (None, "") when neither names it (the site file and the fallback
    are the caller's next places)."""
    o = SHARED[name]
    flag = explicit if explicit is not None else getattr(args, name, None)
    if flag:
        return flag, o.flag
    if os.environ.get(o.envvar):
        return os.environ[o.envvar], f"${o.envvar}"
    return None, ""


def value(args, name: str) -> Optional[str]:
    """Option NAME's value: the flag, its environment variable, else its fallback."""
    return given(args, name)[0] or SHARED[name].fallback
