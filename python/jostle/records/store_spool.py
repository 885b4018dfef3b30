"""The spool: store documents kept on disk while the store cannot be reached.

One JSON file per run (`<uid>.json`, written to a temporary name and renamed, so that a reader
never sees half of one), holding the document store.Store.add takes. `jostle history add` sends
what the spool holds before anything else and removes each file once the transaction that
added its run has committed: a run spooled twice, or added from its record meanwhile, is still
one run (its uid).

The spool is a folder on the node (`$JOSTLE_STORE_SPOOL`, default `results/store-spool`), so a
node whose site store is down keeps its records until it is back. It is kept per store: the
records waiting for a store are in a folder of their own (`SPOOL/<name>-<digest>/`,
store_url.key), each naming its store, and only an add to that same store sends them: a
record is never replayed into another store. A spooled file of an older jostle, at the top
of the spool and naming no store, is left there and counted (`unclaimed`): `jostle history add
SPOOL --db DB` adds such files where the operator says.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..errors import JostleError
from . import store_url

SPOOL_TAG = "jostle_store_spool"   # the key that says a JSON file is a spooled document
SPOOL_SCHEMA = 1
DEFAULT = Path("results") / "store-spool"


def folder(given=None) -> Path:
    return Path(given or os.environ.get("JOSTLE_STORE_SPOOL") or DEFAULT)


def _name(uid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", uid) + ".json"


def of_store(spool: Path, db) -> Path:
    """The folder of SPOOL that keeps the records of the store DB."""
    return Path(spool) / store_url.key(db)


def put(spool: Path, docs, db=None) -> list:
    """Write DOCS into SPOOL, in the folder of the store DB (made if needed); the paths written.
    A document already spooled is written again over itself (the same uid: the same run)."""
    paths = []
    where = of_store(spool, db) if db is not None else Path(spool)
    shown = re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", str(db)) if db is not None else None
    try:
        where.mkdir(parents=True, exist_ok=True)
        for d in docs:
            path = where / _name(d["uid"])
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            obj = {SPOOL_TAG: SPOOL_SCHEMA, "doc": d}
            if db is not None:
                obj.update(store=shown, store_key=store_url.key(db))
            tmp.write_text(json.dumps(obj, sort_keys=True) + "\n", encoding="utf-8")
            os.replace(tmp, path)
            paths.append(path)
    except OSError as e:
        raise JostleError(f"cannot keep the records in the spool {spool}: {e.strerror}; "
                          "nothing was lost from their source files") from None
    return paths


def _age(p: Path) -> tuple:
    try:
        return (p.stat().st_mtime, p.name)
    except OSError:        # sent and removed by another `history add` meanwhile
        return (0.0, p.name)


def is_spooled(obj) -> bool:
    return isinstance(obj, dict) and obj.get(SPOOL_TAG) == SPOOL_SCHEMA and \
        isinstance(obj.get("doc"), dict)


def store_of(obj) -> str:
    """The spool key of the store a spooled OBJ waits for ("" for an older jostle's file)."""
    return str(obj.get("store_key") or "")


def pending(spool: Path, db=None) -> list:
    """[(path, document)] of every run SPOOL holds for the store DB (None: the files at the
    top of SPOOL, which name no store), oldest first."""
    spool = of_store(spool, db) if db is not None else Path(spool)
    try:
        if not spool.is_dir():
            return []
        files = sorted(spool.glob("*.json"), key=_age)
    except OSError as e:
        raise JostleError(f"the spool {spool} cannot be read: {e.strerror or e}") from None
    out = []
    for p in files:
        try:
            obj = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue     # being written by another process, or not ours: left alone
        if is_spooled(obj):
            out.append((p, obj["doc"]))
    return out


def done(paths):
    """Remove spooled files whose runs are in the store now."""
    for p in paths:
        try:
            Path(p).unlink()
        except FileNotFoundError:
            pass      # another `history add` sent it too
