"""The results store (records/store.py): one schema and its migrations, `jostle history add`
idempotent, many writers at once on one SQLite file, the spool while a store cannot be
reached, and files that are not stores refused untouched."""

import copy
import hashlib
import json
import multiprocessing
import os
import shutil
import sqlite3

import pytest

from jostle.records import store, store_docs, store_schema, store_spool

from conftest import run_cli as jostle

pytestmark = pytest.mark.unit


def check_record(node="c3", time="2026-11-20T10:00:00Z", triad=40.0, verdict="healthy",
                 failed=False, **more):
    """A record as `jostle check` writes it into its spool (docs/records.md)."""
    return {"type": "check", "schema": 1, "tool": "jostle check", "version": "0.1.0",
            "node": node, "class": "cpu", "site": "site.toml", "time": time,
            "end": time, "duration_s": 11.2, "budget_s": 15, "timeout_s": 30,
            "verdict": verdict, "exit_status": 0, "reason": "jostle: healthy",
            "checks_run": ["contention", "memlat"],
            "values": [
                {"name": "triad", "value": triad, "unit": "GB/s", "reference": 40.0,
                 "tolerance": 0.1, "worse": "lower", "change": triad / 40 - 1,
                 "verdict": "fail" if failed else "pass", "note": None,
                 "params": {"kernel": "triad", "phase": "compute"}},
                {"name": "memory_latency", "value": 95.0, "unit": "ns", "reference": 95.0,
                 "tolerance": 0.1, "worse": "higher", "change": 0.0, "verdict": "pass",
                 "note": None, "params": {}},
                {"name": "nic", "value": "up 10000 Mb/s", "unit": "", "reference": None,
                 "tolerance": None, "worse": None, "change": None, "verdict": "pass",
                 "note": None, "params": {}}],
            "notes": [], "load": {}, "machine": {"cpu": "Fake CPU", "cores": 2}, "mpi": None,
            **more}


def write_check(folder, rec):
    folder.mkdir(parents=True, exist_ok=True)
    stamp = rec["time"].replace(":", "").replace("-", "")
    path = folder / f"check-{rec['node']}-{stamp}-1.json"
    path.write_text(json.dumps(rec, indent=1) + "\n")
    return path


@pytest.fixture
def campaign(tmp_path, data):
    d = tmp_path / "results" / "c1"
    d.mkdir(parents=True)
    for name in ("pingpong_intra.jsonl", "pingpong_inter.jsonl", "partial.jsonl.partial"):
        shutil.copy(data / name, d / name)
    return d


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------- schema and migrations

def test_a_new_store_is_wal_at_the_current_schema(tmp_path, campaign, capsys):
    db = tmp_path / "s.sqlite"
    rc, _, err = jostle(capsys, "history", "add", campaign, "--db", db)
    assert rc == 0, err
    assert "2 run(s) added" in err and "1 file(s) left out" in err   # the .partial
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("SELECT value FROM jostle_store WHERE key='schema'").fetchone()[0] == \
        str(store_schema.SCHEMA_VERSION)
    runs = con.execute("SELECT name, node, kind, campaign FROM jostle_runs ORDER BY name").fetchall()
    assert [r[0] for r in runs] == ["pingpong_inter", "pingpong_intra"]
    assert all(r[2] == "run" and r[3] == "c1" for r in runs)


def test_a_run_added_twice_is_one_run(tmp_path, campaign, capsys):
    db = tmp_path / "s.sqlite"
    assert jostle(capsys, "history", "add", campaign, "--db", db)[0] == 0
    with store.open_store(db) as st:
        before = st.count()
    # again, and through another path to the same files (a copy elsewhere is the same run)
    copy_dir = tmp_path / "elsewhere"
    shutil.copytree(campaign, copy_dir)
    rc, _, err = jostle(capsys, "history", "add", campaign, copy_dir / "pingpong_intra.jsonl",
                        "--db", db)
    assert rc == 0 and "0 run(s) added" in err and "2 already there" in err
    with store.open_store(db) as st:
        assert st.count() == before and st.integrity() == "ok"


def test_an_older_store_is_migrated_in_place(tmp_path, data):
    db = tmp_path / "old.sqlite"
    con = sqlite3.connect(db)
    for stmt in store_schema.statements(1, "sqlite"):
        con.execute(stmt)
    con.execute("INSERT INTO jostle_store VALUES ('schema', '1')")
    con.commit()
    con.close()
    # a store of schema 1 holding one run, written by that schema's columns only
    doc = store_docs.run_doc(data / "pingpong_intra.jsonl")
    con = sqlite3.connect(db)
    cols = [c for c in store_schema.RUN_COLUMNS]
    con.execute(f"INSERT INTO jostle_runs ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})",
                [doc.get(c) if not isinstance(doc.get(c), (dict, list)) else json.dumps(doc[c])
                 for c in cols[:-1]] + ["2026-11-20T00:00:00Z"])
    con.execute("INSERT INTO jostle_points (run_id, benchmark, metric, params, median) "
                "VALUES (1, 'pingpong', 'latency', '{}', 1.5)")
    con.commit()
    con.close()
    with store.open_store(db) as st:
        assert st.version() == store_schema.SCHEMA_VERSION
        rows = st.points()
        assert len(rows) == 1 and rows[0]["median"] == 1.5 and rows[0]["flagged"] is None
        assert st.add([doc]) == ([], [doc["uid"]])      # the run it held: not added again
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_every_migration_makes_the_schema_the_new_store_has(tmp_path):
    """A store migrated step by step and one made new have the same tables and columns."""
    def shape(path):
        con = sqlite3.connect(path)
        tables = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        return {t: [r[1] for r in con.execute(f"PRAGMA table_info({t})")] for t in tables}
    old = tmp_path / "old.sqlite"
    con = sqlite3.connect(old)
    for stmt in store_schema.statements(1, "sqlite"):
        con.execute(stmt)
    con.execute("INSERT INTO jostle_store VALUES ('schema', '1')")
    con.commit()
    con.close()
    store.open_store(old).close()
    new = tmp_path / "new.sqlite"
    store.open_store(new).close()
    assert shape(old) == shape(new)


# ---------------------------------------------------------------- not a store

def _refused(capsys, tmp_path, path, *words):
    before = digest(path)
    rc, out, err = jostle(capsys, "history", "add", tmp_path / "results", "--db", path)
    assert rc == 2, err
    assert str(path) in err and all(w in err for w in words), err
    assert err.count("\n") == 1            # one line
    assert digest(path) == before          # untouched
    assert not path.with_name(path.name + "-wal").exists()
    rc, _, err = jostle(capsys, "history", "--db", path)
    assert rc == 2 and str(path) in err and digest(path) == before


def test_random_bytes_are_not_a_store(tmp_path, campaign, capsys):
    path = tmp_path / "random.db"
    path.write_bytes(os.urandom(8192))
    _refused(capsys, tmp_path, path, "not a jostle store", "not an SQLite database")


def test_another_applications_sqlite_file_is_not_a_store(tmp_path, campaign, capsys):
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    con.commit()
    con.close()
    _refused(capsys, tmp_path, path, "not a jostle store", "customers")


def test_a_store_of_a_newer_schema_is_refused(tmp_path, campaign, capsys):
    path = tmp_path / "new.sqlite"
    store.open_store(path).close()
    con = sqlite3.connect(path)
    con.execute("UPDATE jostle_store SET value = '99' WHERE key = 'schema'")
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    _refused(capsys, tmp_path, path, "schema 99", "newer")


def test_reading_a_store_that_does_not_exist_makes_none(tmp_path, capsys):
    rc, _, err = jostle(capsys, "history", "--db", tmp_path / "none.sqlite")
    assert rc == 2 and "no store at" in err and not (tmp_path / "none.sqlite").exists()


# ---------------------------------------------------------------- many writers at once

def _writer(db, base, i, n_own, n_shared, q):
    try:
        with store.open_store(db) as st:
            for j in range(n_own):
                d = copy.deepcopy(base)
                d["uid"] = f"own-{i}-{j}"
                st.add([d])
                d = copy.deepcopy(base)
                d["uid"] = f"shared-{j % n_shared}"       # the same runs from every process
                st.add([d])
        q.put(("ok", i))
    except BaseException as e:   # the parent reports it
        q.put(("error", f"{i}: {type(e).__name__}: {e}"))


def run_writers(db, data, procs=32, n_own=4, n_shared=4):
    base = store_docs.run_doc(data / "pingpong_intra.jsonl")
    base["points"] = base["points"][:20]
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    ps = [ctx.Process(target=_writer, args=(db, base, i, n_own, n_shared, q))
          for i in range(procs)]
    for p in ps:
        p.start()
    results = [q.get(timeout=600) for _ in ps]
    for p in ps:
        p.join(timeout=60)
    assert [r for r in results if r[0] != "ok"] == []
    return procs * n_own + n_shared, len(base["points"])


def test_32_processes_add_to_one_sqlite_store_at_once(tmp_path, data):
    db = tmp_path / "many.sqlite"         # made by whichever process comes first
    runs, points = run_writers(str(db), data)
    with store.open_store(db) as st:
        assert st.count() == (runs, runs * points)
        assert st.integrity() == "ok"
        uids = [r["uid"] for r in st.runs()]
    assert len(uids) == len(set(uids)) == runs
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# ---------------------------------------------------------------- the spool

def test_an_unreachable_store_keeps_the_records_in_the_spool(tmp_path, campaign, capsys):
    spool = tmp_path / "spool"
    down = f"postgresql://jostle@/jostle?host={tmp_path / 'no-server'}&connect_timeout=2"
    rc, _, err = jostle(capsys, "history", "add", campaign, "--db", down, "--spool", spool)
    assert rc == store.EXIT_SPOOLED, err
    assert "cannot be reached" in err and "2 run(s) kept in the spool" in err
    assert len(store_spool.pending(spool, down)) == 2
    # again while it is down: the same runs, not kept twice
    rc, _, _ = jostle(capsys, "history", "add", campaign, "--db", down, "--spool", spool)
    assert rc == store.EXIT_SPOOLED and len(store_spool.pending(spool, down)) == 2
    # another store (here: a file) is not where they wait: the spool is kept per store, so
    # nothing of it goes there, and it still holds both for the server
    db = tmp_path / "s.sqlite"
    rc, _, err = jostle(capsys, "history", "add", "--db", db, "--spool", spool)
    assert rc == 0 and "0 run(s) added" in err and "0 from the spool" in err, err
    assert len(store_spool.pending(spool, down)) == 2 and store_spool.pending(spool, db) == []
    # even a walk of the spool itself leaves another store's records where they are
    rc, _, err = jostle(capsys, "history", "add", spool, "--db", db, "--spool", spool)
    assert rc == 0 and "0 run(s) added" in err and "wait for another store" in err, err
    assert len(store_spool.pending(spool, down)) == 2
    rc, _, err = jostle(capsys, "history", "add", campaign, "--db", db, "--spool", spool)
    assert rc == 0 and "2 run(s) added" in err


def test_an_unwritable_sqlite_store_spools(tmp_path, campaign, capsys):
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    rc, _, err = jostle(capsys, "history", "add", campaign, "--db", ro / "s.sqlite",
                        "--spool", tmp_path / "spool")
    ro.chmod(0o700)
    assert rc == store.EXIT_SPOOLED, err


# ---------------------------------------------------------------- what is added

def test_check_records_become_runs_of_kind_check(tmp_path, capsys):
    spool = tmp_path / "checks"
    write_check(spool, check_record(time="2026-11-20T10:00:00.412Z", mpi="Open MPI v4.1.4"))
    write_check(spool, check_record(time="2026-11-21T10:00:00Z", triad=30.0,
                                    verdict="unhealthy", failed=True))
    write_check(spool, check_record(time="2026-11-22T10:00:00Z", verdict="skipped", values=[]))
    # a check's runs being measured, in a hidden folder of its spool: not added
    hidden = spool / "runs" / ".check-x"
    hidden.mkdir(parents=True)
    shutil.copy(os.path.join(os.path.dirname(__file__), "data", "pingpong_intra.jsonl"), hidden)
    (spool / "campaign.json").write_text("{}")          # another JSON: not a record
    db = tmp_path / "s.sqlite"
    rc, _, err = jostle(capsys, "history", "add", spool, "--db", db)
    assert rc == 0 and "3 run(s) added" in err, err
    with store.open_store(db) as st:
        runs = st.runs()
        rows = st.points(store.Query(metrics=("triad",)))
    assert [r["kind"] for r in runs] == ["check"] * 2 and {r["node"] for r in runs} == {"c3"}
    # (the skipped check has no value: no point selects its run)
    assert [(r["median"], r["flagged"], r["verdict"]) for r in rows] == \
        [(40.0, 0, "healthy"), (30.0, 1, "unhealthy")]
    assert rows[0]["reference"] == 40.0 and rows[0]["tolerance"] == 0.1
    assert rows[0]["class"] == "cpu" and rows[0]["benchmark"] == "check"
    assert rows[0]["time"] == "2026-11-20T10:00:00Z" and rows[0]["mpi"] == {
        "library": "Open MPI v4.1.4"}


def test_a_damaged_record_is_named_and_the_rest_added(tmp_path, data, capsys):
    d = tmp_path / "c"
    d.mkdir()
    shutil.copy(data / "pingpong_intra.jsonl", d)
    shutil.copy(data / "malformed.jsonl", d)
    rc, _, err = jostle(capsys, "history", "add", d, "--db", tmp_path / "s.sqlite")
    assert rc == 1 and "malformed.jsonl" in err and "1 run(s) added" in err


def test_a_scan_fingerprint_run_belongs_to_the_node_its_name_says(tmp_path, data):
    d = tmp_path / "scan"
    d.mkdir()
    shutil.copy(data / "pingpong_intra.jsonl", d / "fp-pingpong-n7.jsonl")
    (doc,) = store_docs.find([d]).docs
    assert doc["node"] == "n7" and doc["campaign"] == "scan"


def test_a_password_is_never_printed(tmp_path, campaign, capsys):
    url = f"postgresql://u:s3cret@/db?host={tmp_path / 'none'}&connect_timeout=1"
    rc, out, err = jostle(capsys, "history", "add", campaign, "--db", url, "--spool",
                          tmp_path / "spool")
    assert rc == store.EXIT_SPOOLED and "s3cret" not in out + err and "***" in err
