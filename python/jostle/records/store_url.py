"""What a store's name may be, judged before anything is opened or made (docs/history.md, "The
store"): a file path (SQLite), `sqlite://PATH` (the same file), or `postgresql://…`
(`postgres://…`). Anything else with `://` in it (mysql://, the typo postgresq://) is a mistake
of configuration, refused with the schemes allowed named and nothing made, never taken for a
file path.

It also sorts PostgreSQL's refusals: a server that answers and refuses (no such database or
role, a wrong password) is a configuration error (exit 2, the server's reason); a server out of
reach (no answer, refused connection, unknown host, starting up, full) is for later: the records
are spooled (exit 75). And it names a store for its spool (`key`), so that records kept for one
store never go into another.
"""

from __future__ import annotations

import hashlib
import os
import re

SCHEMES = ("sqlite", "postgresql", "postgres")
ALLOWED = "a file path (SQLite), sqlite://PATH, or postgresql://… (postgres://…)"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")

# A server's FATAL that says "not now" rather than "not this": the records wait in the spool.
TRANSIENT = ("the database system is starting up", "the database system is shutting down",
             "the database system is in recovery mode", "the database system is not yet "
             "accepting connections", "the database system is not accepting connections",
             "too many clients", "remaining connection slots are reserved",
             "terminating connection due to administrator command",
             "the database system is in startup mode")


def scheme(db) -> str:
    """The scheme of DB (lower case), "" for a plain path."""
    m = _SCHEME.match(str(db))
    return m.group(1).lower() if m else ""


def problem(db) -> str:
    """Why DB cannot name a store ("" when it can): an unknown scheme, an empty sqlite://."""
    text = str(db)
    s = scheme(text)
    if not s:
        return "" if "://" not in text else "it is not a URL of a scheme jostle knows"
    if s not in SCHEMES:
        return f"unknown scheme '{s}://'"
    if not text.startswith(f"{s}://"):
        return f"write its scheme in lower case ({s}://)"
    if s == "sqlite" and not text[len("sqlite://"):]:
        return "sqlite:// names no file"
    return ""


def message(db, shown) -> str:
    """The one line refusing DB (SHOWN: as it may be printed)."""
    return (f"'{shown}' is not a store: {problem(db)}; allowed: {ALLOWED}")


def is_postgresql(db) -> bool:
    return scheme(db) in ("postgresql", "postgres")


def sqlite_path(db) -> str:
    """The file of an SQLite store: DB itself, or what follows sqlite://
    (sqlite:///var/lib/jostle/store.sqlite, sqlite://results/store.sqlite)."""
    text = str(db)
    return text[len("sqlite://"):] if scheme(text) == "sqlite" else text


def key(db) -> str:
    """The spool's name for the store DB: readable, and a digest of what the store is (an
    SQLite file's absolute path, a PostgreSQL URL without its password)."""
    if is_postgresql(db):
        ident = re.sub(r"(://[^:/@]*):[^@/]*@", r"\1@", str(db))
        ident = re.sub(r"([?&]password=)[^&]*", r"\1", ident)
    else:
        ident = os.path.abspath(sqlite_path(db))
    tail = re.sub(r"[^A-Za-z0-9_.-]+", "_", ident.split("://")[-1].split("?")[0]).strip("_.")
    return f"{tail[-40:] or 'store'}-{hashlib.sha256(ident.encode()).hexdigest()[:12]}"


def server_refusal(e) -> str:
    """The reason a PostgreSQL server that answered gave for refusing the connection, or ""
    when it did not answer (or answered "not now")."""
    text = str(e)
    if "no password supplied" in text:
        return "the server asks for a password and none was given"
    m = re.search(r"FATAL:\s+(.*)", text)
    if not m:
        return ""
    reason = m.group(1).strip().splitlines()[0].strip()
    if any(t in reason for t in TRANSIENT):
        return ""
    return reason
