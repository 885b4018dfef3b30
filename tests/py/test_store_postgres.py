"""The results store on a real PostgreSQL server started here (pglocal.py): the same schema and
queries as SQLite, 32 processes adding at once, a server down (records spooled, exit 75) and
back, and a store of another schema version refused untouched."""

import json
import shutil

import pytest

from jostle.records import store, store_spool
from pglocal import Postgres
from test_store import jostle, run_writers

pytestmark = pytest.mark.system

psycopg = pytest.importorskip("psycopg", reason="psycopg is a test dependency (pyproject)")


@pytest.fixture(scope="module")
def pg():
    server = Postgres().init().start()
    yield server
    server.remove()


@pytest.fixture
def empty(pg):
    """PG with no jostle table: each test makes its store anew."""
    with psycopg.connect(pg.url, autocommit=True) as con:
        con.execute("DROP TABLE IF EXISTS jostle_points, jostle_runs, jostle_store CASCADE")
    return pg.url


def test_32_processes_add_to_one_postgresql_store_at_once(empty, data):
    runs, points = run_writers(empty, data)        # the schema made by whichever comes first
    with store.open_store(empty) as st:
        assert st.count() == (runs, runs * points) and st.integrity() == "ok"
        assert st.version() == store.schema.SCHEMA_VERSION
    with psycopg.connect(empty) as con:
        uids = con.execute("SELECT uid, COUNT(*) FROM jostle_runs GROUP BY uid "
                           "HAVING COUNT(*) > 1").fetchall()
        orphans = con.execute("SELECT COUNT(*) FROM jostle_points p LEFT JOIN jostle_runs r "
                              "ON p.run_id = r.id WHERE r.id IS NULL").fetchone()[0]
    assert uids == [] and orphans == 0


def test_the_same_history_as_from_sqlite(empty, tmp_path, data, capsys):
    d = tmp_path / "results" / "c1"
    d.mkdir(parents=True)
    for name in ("pingpong_intra.jsonl", "pingpong_inter.jsonl"):
        shutil.copy(data / name, d / name)
    lite = tmp_path / "s.sqlite"
    outs = []
    for db in (empty, lite):
        rc, _, err = jostle(capsys, "history", "add", d, "--db", db)
        assert rc == 0 and "2 run(s) added" in err, err
        rc, _, err = jostle(capsys, "history", "add", d, "--db", db)
        assert rc == 0 and "0 run(s) added" in err
        rc, out, err = jostle(capsys, "history", "--db", db, "--format", "json", "--metric",
                              "latency", "--size", "8")
        assert rc == 0, err
        doc = json.loads(out)
        doc.pop("store")
        for r in doc["runs"]:
            r.pop("added")          # when each was added: seconds apart
        outs.append(doc)
    assert outs[0] == outs[1] and outs[0]["series"]


def test_a_server_down_spools_and_the_records_go_when_it_is_back(pg, empty, tmp_path, data,
                                                                capsys, monkeypatch):
    d = tmp_path / "c"
    d.mkdir()
    shutil.copy(data / "pingpong_intra.jsonl", d)
    spool = tmp_path / "spool"
    monkeypatch.setenv("JOSTLE_DB_CONNECT_TIMEOUT", "3")
    pg.stop()
    try:
        rc, _, err = jostle(capsys, "history", "add", d, "--db", empty, "--spool", spool)
    finally:
        pg.start()
    assert rc == store.EXIT_SPOOLED and "cannot be reached" in err, err
    assert len(store_spool.pending(spool, empty)) == 1
    rc, _, err = jostle(capsys, "history", "add", "--db", empty, "--spool", spool)
    assert rc == 0 and "1 run(s) added" in err and "1 from the spool" in err, err
    assert store_spool.pending(spool, empty) == []


def test_a_store_of_another_schema_version_is_refused_untouched(empty, tmp_path, data, capsys):
    with store.open_store(empty):
        pass
    with psycopg.connect(empty, autocommit=True) as con:
        con.execute("UPDATE jostle_store SET value = '7' WHERE key = 'schema'")
    rc, _, err = jostle(capsys, "history", "add", data / "pingpong_intra.jsonl", "--db", empty,
                        "--spool", tmp_path / "spool")
    assert rc == 2 and "schema 7" in err and "postgresql://" in err, err
    with psycopg.connect(empty) as con:
        assert con.execute("SELECT COUNT(*) FROM jostle_runs").fetchone()[0] == 0
        assert con.execute("SELECT value FROM jostle_store WHERE key = 'schema'"
                           ).fetchone()[0] == "7"
    assert store_spool.pending(tmp_path / "spool", empty) == []
