"""The spool: store documents kept on disk while the store cannot be reached.

One JSON file per run (`<uid>.json`, written to a temporary name and renamed, so that a reader
never sees half of one), holding the document store.Store.add takes. `jostle history add` sends
what the spool holds before anything else and removes each file once the transaction that
added its run has committed: a run spooled twice, or added from its record meanwhile, is still
one run (its uid).

The spool is a folder on the node (`$JOSTLE_STORE_SPOOL`, default `results/store-spool`), so a
node whose site store is down keeps its records until it is back.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..errors import JostleError

SPOOL_TAG = "jostle_store_spool"   # the key that says a JSON file is a spooled document
SPOOL_SCHEMA = 1
DEFAULT = Path("results") / "store-spool"


def folder(given=None) -> Path:
    return Path(given or os.environ.get("JOSTLE_STORE_SPOOL") or DEFAULT)


def _name(uid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", uid) + ".json"


def put(spool: Path, docs) -> list:
    """Write DOCS into SPOOL (made if needed); the paths written. A document already spooled
    is written again over itself (the same uid: the same run)."""
    paths = []
    try:
        spool.mkdir(parents=True, exist_ok=True)
        for d in docs:
            path = spool / _name(d["uid"])
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({SPOOL_TAG: SPOOL_SCHEMA, "doc": d}, sort_keys=True) + "\n",
                           encoding="utf-8")
            os.replace(tmp, path)
            paths.append(path)
    except OSError as e:
        raise JostleError(f"cannot keep the records in the spool {spool}: {e.strerror}; "
                          "nothing was lost from their source files") from None
    return paths


def is_spooled(obj) -> bool:
    return isinstance(obj, dict) and obj.get(SPOOL_TAG) == SPOOL_SCHEMA and \
        isinstance(obj.get("doc"), dict)


def pending(spool: Path) -> list:
    """[(path, document)] of every run SPOOL holds, oldest first."""
    if not spool.is_dir():
        return []
    out = []
    for p in sorted(spool.glob("*.json"), key=lambda p: (p.stat().st_mtime, p.name)):
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
