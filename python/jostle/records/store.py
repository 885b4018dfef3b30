"""The results store: every run and check a site keeps, across campaigns, nodes and days.

One schema (store_schema.py), two databases behind the same queries:

  - SQLite by default: a file (`results/store.sqlite`), in WAL mode so that readers never wait
    for a writer; each batch of runs is added in one `BEGIN IMMEDIATE` transaction, writers
    waiting their turn under a busy timeout (BUSY_TIMEOUT_S), so that many `jostle history add`
    at once on one host lose no row, double none, and leave the file whole;
  - PostgreSQL for a site (`postgresql://…`): the same tables and statements, for many nodes
    writing at once; the schema is made or migrated under an advisory lock.

A run is identified by the digest of its record (`uid`, unique): adding it again adds nothing.
A file that is not a store (not SQLite, SQLite without jostle's tables, a schema newer than this
jostle's) is refused before anything is written to it (StoreError, exit 2). A store that cannot
be reached (a PostgreSQL server down, a file that cannot be opened) raises StoreUnreachable:
the caller keeps the records in the spool (store_spool.py) and says so (exit EXIT_SPOOLED).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Optional

from ..errors import JostleError, UsageError
from . import store_schema as schema
from . import store_url

DEFAULT_PATH = Path("results") / "store.sqlite"
SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 300       # a writer waits this long for its turn before giving up
BATCH = 100                # runs per transaction: the lock is held for a few milliseconds
EXIT_SPOOLED = 75          # sysexits' EX_TEMPFAIL: kept for later, try again
_ADVISORY_KEY = 0x6A6F73746C65   # "jostle": serialises the schema's creation in PostgreSQL


class StoreError(UsageError):
    """Not a store this jostle can use: named, untouched (exit 2)."""


class StoreUnreachable(JostleError):
    """The store could not be reached: the records stay in the spool (exit EXIT_SPOOLED)."""

    exit_status = EXIT_SPOOLED


def is_postgresql(db) -> bool:
    return store_url.is_postgresql(db)


def refuse_unknown_scheme(db):
    """StoreError (exit 2, nothing made) when DB is of a scheme no store has (mysql://,
    postgresq://): a typo is not a file path (store_url.py)."""
    if store_url.problem(db):
        raise StoreError(store_url.message(db, shown(db)))


def shown(db) -> str:
    """DB as a message may print it: a PostgreSQL URL without its password."""
    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", str(db))


@dataclass
class Query:
    """Which points a history reads: every field empty reads everything. NODES, CLASSES:
    names or shell patterns (c*, n[1-4]); SINCE, UNTIL: UTC ISO 8601 text, inclusive."""
    nodes: tuple = ()
    classes: tuple = ()
    metrics: tuple = ()
    benchmarks: tuple = ()
    sizes: tuple = ()
    kinds: tuple = ()
    since: Optional[str] = None
    until: Optional[str] = None
    campaigns: tuple = field(default_factory=tuple)


def patterned(values) -> bool:
    return any(ch in v for v in values for ch in "*?[")


class Store:
    """An open store: add documents (store_docs.py makes them), read points back."""

    def __init__(self, conn, dialect: str, where: str):
        self.conn, self.dialect, self.where = conn, dialect, where

    # ------------------------------------------------------------ plumbing
    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.dialect == "postgresql" else sql

    def _exec(self, sql, params=()):
        return self.conn.execute(self._sql(sql), params)

    def _begin(self):
        self._exec("BEGIN IMMEDIATE" if self.dialect == "sqlite" else "BEGIN")

    def close(self):
        try:
            self.conn.close()
        except Exception:   # closing what may be broken: nothing to tell
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def version(self) -> int:
        row = self._exec("SELECT value FROM jostle_store WHERE key = ?", ("schema",)).fetchone()
        return int(row[0])

    def _migrate(self, have: int) -> list:
        """Apply what a store at version HAVE lacks (inside the caller's transaction)."""
        steps = schema.upgrade_path(have)
        for v in steps:
            for stmt in schema.statements(v, self.dialect):
                self._exec(stmt)
        now = _now()
        if have == 0:
            for k, v in (("created", now), ("tool", "jostle")):
                self._exec("INSERT INTO jostle_store (key, value) VALUES (?, ?)", (k, v))
            self._exec("INSERT INTO jostle_store (key, value) VALUES (?, ?)",
                       ("schema", str(schema.SCHEMA_VERSION)))
        elif steps:
            self._exec("UPDATE jostle_store SET value = ? WHERE key = ?",
                       (str(schema.SCHEMA_VERSION), "schema"))
        return steps

    # ------------------------------------------------------------ writing
    def add(self, docs) -> tuple:
        """Add DOCS (store_docs documents), BATCH runs a transaction: (uids added, uids that
        were already there). A run already in the store is left as it is."""
        added, present = [], []
        docs = list(docs)
        for i in range(0, len(docs), BATCH):
            chunk = docs[i:i + BATCH]
            a, p = self._with_retry(lambda c=chunk: self._add_batch(c))
            added += a
            present += p
        return added, present

    def _with_retry(self, fn):
        """FN in a transaction, again if SQLite's lock could not be had within the busy
        timeout (only under extreme contention; PostgreSQL waits on its own)."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                self._begin()
                try:
                    out = fn()
                    self._exec("COMMIT")
                    return out
                except BaseException:
                    self._rollback()
                    raise
            except JostleError:
                raise
            except Exception as e:   # sorted below: locked, or unreachable
                if self.dialect == "sqlite" and "locked" in str(e) and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                raise _classify(self.where, e) from None

    def _rollback(self):
        try:
            self._exec("ROLLBACK")
        except Exception:   # no transaction left to roll back
            pass

    def _add_batch(self, docs) -> tuple:
        added, present = [], []
        run_sql = (f"INSERT INTO jostle_runs ({', '.join(schema.RUN_COLUMNS)}) VALUES "
                   f"({', '.join('?' * len(schema.RUN_COLUMNS))}) "
                   "ON CONFLICT (uid) DO NOTHING RETURNING id")
        point_sql = (f"INSERT INTO jostle_points (run_id, {', '.join(schema.POINT_COLUMNS)}) "
                     f"VALUES ({', '.join('?' * (len(schema.POINT_COLUMNS) + 1))})")
        now = _now()
        for d in docs:
            row = self._exec(run_sql, _run_values(d, now)).fetchone()
            if row is None:
                present.append(d["uid"])
                continue
            values = [(row[0], *_point_values(p, d)) for p in d.get("points", ())]
            if values:
                cur = self.conn.cursor()
                cur.executemany(self._sql(point_sql), values)
            added.append(d["uid"])
        return added, present

    # ------------------------------------------------------------ reading
    def _where(self, q: Optional[Query]) -> tuple:
        sql, params = [], []
        q = q or Query()

        def among(col, values):
            if values and not patterned(values):
                sql.append(f"{col} IN ({', '.join('?' * len(values))})")
                params.extend(values)
        among("r.node", tuple(q.nodes))
        among("r.class", tuple(q.classes))
        among("p.metric", tuple(q.metrics))
        among("p.benchmark", tuple(q.benchmarks))
        among("r.kind", tuple(q.kinds))
        among("r.campaign", tuple(q.campaigns))
        if q.sizes:
            sql.append(f"p.size IN ({', '.join('?' * len(q.sizes))})")
            params.extend(float(s) for s in q.sizes)
        if q.since:
            sql.append("r.time >= ?")
            params.append(q.since)
        if q.until:
            sql.append("r.time <= ?")
            params.append(q.until)
        return (" WHERE " + " AND ".join(sql)) if sql else "", params

    def points(self, q: Optional[Query] = None) -> list:
        """Every point Q selects, with its run's columns, in time order: a dict per point."""
        where, params = self._where(q)
        run_cols = ("uid", "kind", "campaign", "name", "node", "class", "time", "verdict",
                    "machine", "mpi")
        cols = [f"r.{c}" for c in run_cols] + [f"p.{c}" for c in schema.POINT_COLUMNS]
        names = [("run_benchmark" if c == "benchmark" else c) for c in run_cols] + \
            list(schema.POINT_COLUMNS)
        rows = self._exec(f"SELECT {', '.join(cols)} FROM jostle_points p JOIN jostle_runs r "
                          f"ON p.run_id = r.id{where} ORDER BY r.time, r.id, p.id", params)
        out = [dict(zip(names, r)) for r in rows.fetchall()]
        for d in out:
            d["params"] = json.loads(d["params"])
            d["machine"] = json.loads(d["machine"]) if d["machine"] else {}
            d["mpi"] = json.loads(d["mpi"]) if d["mpi"] else {}
        return glob_filter(out, q or Query())

    def runs(self, q: Optional[Query] = None) -> list:
        """The runs Q selects (a run is selected when one of its points is), in time order."""
        where, params = self._where(q)
        cols = ("uid", "kind", "campaign", "name", "benchmark", "node", "class", "time",
                "verdict", "source", "added")
        rows = self._exec(
            f"SELECT {', '.join('r.' + c for c in cols)} FROM jostle_runs r WHERE r.id IN "
            f"(SELECT p.run_id FROM jostle_points p JOIN jostle_runs r ON p.run_id = r.id"
            f"{where}) ORDER BY r.time, r.id", params).fetchall()
        return glob_filter([dict(zip(cols, r)) for r in rows], q or Query())

    def count(self) -> tuple:
        """(runs, points) in the store."""
        runs = self._exec("SELECT COUNT(*) FROM jostle_runs").fetchone()[0]
        pts = self._exec("SELECT COUNT(*) FROM jostle_points").fetchone()[0]
        return int(runs), int(pts)

    def integrity(self) -> str:
        """SQLite's `PRAGMA integrity_check` ("ok" when whole); PostgreSQL: "ok" when the
        server answers (it checks its own pages)."""
        if self.dialect == "sqlite":
            return "; ".join(r[0] for r in self._exec("PRAGMA integrity_check").fetchall())
        self._exec("SELECT 1").fetchone()
        return "ok"


def glob_filter(rows, q: Query) -> list:
    """What SQL did not filter: the NODES and CLASSES given as shell patterns."""
    for key, pats in (("node", q.nodes), ("class", q.classes)):
        if pats and patterned(pats):
            rows = [r for r in rows if any(fnmatchcase(str(r.get(key) or ""), p) for p in pats)]
    return rows


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _json(v) -> Optional[str]:
    return None if v is None else json.dumps(v, sort_keys=True, separators=(",", ":"))


def _run_values(d, now) -> tuple:
    return (d["uid"], d["kind"], d.get("campaign"), d["name"], d["benchmark"], d["node"],
            d.get("class"), d["time"], d.get("verdict"), _json(d.get("machine")),
            _json(d.get("environment")), _json(d.get("mpi")), _json(d.get("meta")),
            d.get("source"), now)


def _point_values(p, d) -> tuple:
    out = []
    for c in schema.POINT_COLUMNS:
        v = p.get(c)
        if c == "benchmark":
            v = v or d["benchmark"]
        elif c == "params":
            v = _json(v or {})
        elif c in ("converged", "flagged") and v is not None:
            v = int(bool(v))
        out.append(v)
    return tuple(out)


def _message(e) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def _unreachable(where, e) -> StoreUnreachable:
    return StoreUnreachable(f"the store {where} cannot be reached: {_message(e)}")


def _classify(where, e) -> JostleError:
    """A database error as jostle tells it: the store out of reach for now (a server down, a
    file that cannot be opened or written, its lock never free: the records are spooled), or
    a store that answered with an error (exit 1, named)."""
    kind = type(e).__name__
    if kind in ("OperationalError", "InterfaceError") or isinstance(e, OSError):
        return _unreachable(where, e)
    return JostleError(f"the store {where} refused the records: {_message(e)}")


# ---------------------------------------------------------------- opening

def open_store(db, create: bool = True) -> Store:
    """The store at DB (a path, or a postgresql:// URL), made when CREATE and new, migrated
    when older. StoreError when DB is not a store; StoreUnreachable when it cannot be
    reached."""
    refuse_unknown_scheme(db)
    if is_postgresql(db):
        return _open_postgresql(str(db), create)
    return _open_sqlite(Path(store_url.sqlite_path(db)), create)


def _sqlite_header(path: Path) -> bytes:
    """The first bytes of PATH; a file another process is creating this instant (empty, or
    its first page not yet written) is read again."""
    for _ in range(5):
        try:
            with open(path, "rb") as f:
                head = f.read(len(SQLITE_HEADER))
        except FileNotFoundError:
            return b""
        except OSError as e:
            raise StoreUnreachable(f"the store {path} cannot be read: {e.strerror}") from None
        if head == SQLITE_HEADER or len(head) == len(SQLITE_HEADER):
            return head
        if head and not SQLITE_HEADER.startswith(head):
            return head
        time.sleep(0.05)
    return head


def _judge_sqlite(path: Path, head: bytes):
    if head and head != SQLITE_HEADER:
        raise StoreError(f"'{path}' is not a jostle store: not an SQLite database (it begins "
                         f"with {head[:8]!r}); give --db a store file, or a new file name")


def _open_sqlite(path: Path, create: bool) -> Store:
    import sqlite3
    if not path.exists() and not create:
        raise UsageError(f"no store at '{path}': make one with `jostle history add DIR --db "
                         f"{path}`")
    if path.is_dir():
        raise StoreError(f"'{path}' is a directory, not a store file")
    _judge_sqlite(path, _sqlite_header(path))
    if create and not path.parent.exists():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreUnreachable(f"the store {path} cannot be made: {e.strerror}") from None
    try:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as e:
        raise _unreachable(path, e) from None
    store = Store(conn, "sqlite", str(path))
    try:
        have = _sqlite_version(store, path)
        store._exec("PRAGMA foreign_keys = ON")
        if have == schema.SCHEMA_VERSION:
            return store
        # new or older: WAL first (a property of the file, kept), then the tables
        _set_wal(store)
        store._with_retry(lambda: _ensure(store, path))
        return store
    except BaseException:
        store.close()
        raise


def _sqlite_version(store: Store, path: Path) -> int:
    """The schema version the file holds: 0 for an empty database; StoreError (nothing
    written) for a database that is not a jostle store or is of a newer version."""
    import sqlite3
    try:
        tables = {r[0] for r in store._exec(
            "SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
    except sqlite3.DatabaseError as e:
        if isinstance(e, sqlite3.OperationalError) and "locked" in str(e):
            raise _unreachable(path, e) from None
        raise StoreError(f"'{path}' is not a jostle store: SQLite cannot read it ({e})") from None
    if not tables:
        return 0
    if "jostle_store" not in tables:
        some = ", ".join(sorted(tables)[:5])
        raise StoreError(f"'{path}' is not a jostle store: an SQLite database without jostle's "
                         f"tables (it has {some})")
    have = _version_of(store, path)
    if have > schema.SCHEMA_VERSION:
        raise StoreError(f"'{path}' is a jostle store of schema {have}, newer than this "
                         f"jostle's {schema.SCHEMA_VERSION}: use a newer jostle")
    return have


def _version_of(store: Store, where) -> int:
    try:
        return store.version()
    except (TypeError, ValueError, IndexError):
        raise StoreError(f"'{where}' is not a jostle store: its schema version is not a "
                         "number") from None


def _set_wal(store: Store):
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            mode = store._exec("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() == "wal":
                return
        except Exception as e:   # another process holds the file this instant
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise _unreachable(store.where, e) from None
        time.sleep(0.05)


def _ensure(store: Store, where):
    """Inside a write transaction: make the tables, or migrate them (another process may have
    done either since the file was judged)."""
    have = 0
    if store.dialect == "sqlite":
        tables = {r[0] for r in store._exec(
            "SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
        exists = "jostle_store" in tables
    else:
        exists = store._exec("SELECT to_regclass('jostle_store')").fetchone()[0] is not None
    if exists:
        have = _version_of(store, where)
        if have > schema.SCHEMA_VERSION:
            raise StoreError(f"'{where}' is a jostle store of schema {have}, newer than this "
                             f"jostle's {schema.SCHEMA_VERSION}: use a newer jostle")
    steps = store._migrate(have)
    if steps and have:
        import sys
        print(f"jostle: store {where} migrated from schema {have} to {schema.SCHEMA_VERSION}",
              file=sys.stderr)


def _open_postgresql(url: str, create: bool) -> Store:
    try:
        import psycopg
    except ImportError:
        raise UsageError("a postgresql:// store needs psycopg: pip install 'jostle[postgresql]' "
                         "(or Debian's python3-psycopg)") from None
    where = shown(url)
    timeout = int(os.environ.get("JOSTLE_DB_CONNECT_TIMEOUT", "10"))
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=timeout)
    except psycopg.Error as e:
        why = store_url.server_refusal(e)
        if why:      # the server answered: no such database, role, password
            raise StoreError(f"the store {where} refused the connection: {why}; check --db, "
                             "$JOSTLE_DB or the site file's store") from None
        raise _unreachable(where, e) from None
    except Exception as e:   # a malformed URL: psycopg's own messages
        raise UsageError(f"--db '{where}': not a PostgreSQL connection URL ({e})") from None
    store = Store(conn, "postgresql", where)
    try:
        def ensure():
            store._exec("SELECT pg_advisory_xact_lock(?)", (_ADVISORY_KEY,))
            exists = store._exec("SELECT to_regclass('jostle_store')").fetchone()[0]
            if exists is None and not create:
                raise UsageError(f"no jostle store in {where}: make one with `jostle history "
                                 "add DIR --db URL`")
            _ensure(store, where)
        store._with_retry(ensure)
        return store
    except BaseException:
        store.close()
        raise
