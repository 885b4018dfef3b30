"""A store named wrong is a configuration error, not an outage (issue 47): a URL of a scheme no
store has (mysql://, the typo postgresq://), through --db, $JOSTLE_DB, the site file or
--record, is one line naming the schemes allowed, exit 2, nothing made; a PostgreSQL server that
answers and refuses (no such database, no such role) is exit 2 with the server's reason, and
only a server out of reach spools (exit 75). And `history add` names and counts the files it
could not read (exit 1)."""

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import REPO
from conftest import run_cli as jostle
from jostle.records import store, store_spool, store_url

pytestmark = pytest.mark.unit

BAD = ["mysql://root@localhost/jostle", "postgresq://jostle@db.site/jostle",
       "http://db.site/jostle", "Postgresql://db.site/jostle", "sqlite://"]


def _tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def here(tmp_path, data, monkeypatch):
    """A working folder holding one campaign, the spool and the default store's folder
    inside it: whatever a command makes shows in its tree."""
    (tmp_path / "c1").mkdir()
    shutil.copy(data / "pingpong_intra.jsonl", tmp_path / "c1")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JOSTLE_DB", raising=False)
    monkeypatch.delenv("JOSTLE_SITE", raising=False)
    monkeypatch.setenv("JOSTLE_STORE_SPOOL", str(tmp_path / "spool"))
    return tmp_path


def _one_line_exit_2(rc, out, err):
    lines = [x for x in err.splitlines() if x.strip()]
    assert rc == 2 and len(lines) == 1, err
    assert "Traceback" not in err and "sqlite://PATH, or postgresql://" in lines[0], err
    return lines[0]


@pytest.mark.parametrize("db", BAD)
def test_a_store_url_of_no_store_scheme_is_refused_and_nothing_is_made(here, capsys, db):
    before = _tree(here)
    for argv in (["history", "add", "c1", "--db", db], ["history", "--db", db],
                 ["export", "--format", "openmetrics", "--db", db]):
        line = _one_line_exit_2(*jostle(capsys, *argv))
        assert store.shown(db) in line
    assert _tree(here) == before


def test_jostle_db_and_the_site_file_are_judged_as_db_is(here, capsys, monkeypatch):
    before = _tree(here)
    monkeypatch.setenv("JOSTLE_DB", "mysql://root@localhost/jostle")
    line = _one_line_exit_2(*jostle(capsys, "history", "add", "c1"))
    assert line.startswith("jostle: error: $JOSTLE_DB: 'mysql://root@localhost/jostle'")
    monkeypatch.delenv("JOSTLE_DB")
    site = here / "site.toml"
    site.write_text('[check]\nstore = "postgresq://db.site/jostle"\n')
    line = _one_line_exit_2(*jostle(capsys, "history", "add", "c1", "--site", site))
    assert "the site file's [check] store" in line and "postgresq://" in line
    assert _tree(here) == before + ["site.toml"]


def test_record_refuses_an_unknown_scheme_before_anything_is_measured(here, capsys):
    rc, _, err = jostle(capsys, "pingpong", "--record", "mysql://x", "--dry-run")
    assert rc == 2 and "unknown scheme 'mysql://'" in err and "Traceback" not in err, err
    assert not (here / "spool").exists() and not (here / "results").exists()


def test_sqlite_urls_name_the_file(here, capsys):
    rc, _, err = jostle(capsys, "history", "add", "c1", "--db", "sqlite://s.sqlite")
    assert rc == 0 and "1 run(s) added" in err, err
    assert (here / "s.sqlite").is_file() and not (here / "sqlite:").exists()
    rc, _, err = jostle(capsys, "history", "add", "c1", "--db", f"sqlite://{here}/s.sqlite")
    assert rc == 0 and "0 run(s) added" in err and "1 already there" in err, err


def test_each_store_has_its_own_spool_folder():
    a, b = "postgresql://jostle:pw@db.site/jostle", "postgresql://jostle:other@db.site/jostle"
    assert store_url.key(a) == store_url.key(b)      # the password is not the store
    assert store_url.key(a) != store_url.key("postgresql://jostle@db.site/other")
    assert store_url.key("s.sqlite") == store_url.key(os.path.abspath("s.sqlite"))
    assert "pw" not in store_url.key(a)


def test_a_server_refusal_is_told_from_an_outage():
    fatal = ('connection failed: connection to server on socket "/tmp/x/.s.PGSQL.5432" '
             'failed: FATAL:  database "nosuchdb" does not exist')
    assert store_url.server_refusal(Exception(fatal)) == 'database "nosuchdb" does not exist'
    assert store_url.server_refusal(Exception(
        "connection failed: FATAL:  the database system is starting up")) == ""
    assert store_url.server_refusal(Exception(
        'connection to server at "127.0.0.1", port 1 failed: Connection refused')) == ""


# ---------------------------------------------------------------- a real server refusing

@pytest.mark.system
def test_a_server_that_refuses_is_exit_2_with_its_reason_and_nothing_spooled(here, capsys):
    pytest.importorskip("psycopg", reason="psycopg is a test dependency (pyproject)")
    from pglocal import Postgres
    pg = Postgres().init().start()
    try:
        before = _tree(here)
        for url, reason in ((f"postgresql://jostle@/nosuchdb?host={pg.dir}",
                             'database "nosuchdb" does not exist'),
                            (f"postgresql://nobody@/postgres?host={pg.dir}",
                             'role "nobody" does not exist')):
            rc, _, err = jostle(capsys, "history", "add", "c1", "--db", url)
            lines = [x for x in err.splitlines() if x.strip()]
            assert rc == 2 and len(lines) == 1 and reason in lines[0], err
            assert "refused the connection" in lines[0] and "Traceback" not in err
        assert _tree(here) == before               # nothing spooled, nothing made
        # the same server, its socket gone: out of reach, spooled for that store
        down = f"postgresql://jostle@/postgres?host={here / 'no-server'}"
        rc, _, err = jostle(capsys, "history", "add", "c1", "--db", down)
        assert rc == store.EXIT_SPOOLED and "cannot be reached" in err, err
        assert len(store_spool.pending(here / "spool", down)) == 1
        # once right, the store takes the run from its campaign; the spool of the other
        # URL is not replayed into it
        good = f"postgresql://jostle@/postgres?host={pg.dir}"
        rc, _, err = jostle(capsys, "history", "add", "c1", "--db", good)
        assert rc == 0 and "1 run(s) added" in err and "(0 from the spool)" in err, err
    finally:
        pg.remove()


# ---------------------------------------------------------------- files it cannot read

def _as_nobody():
    """argv prefix running a command as an unprivileged user (root reads every file)."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("running as root and there is no 'nobody' user to read as")
    if not shutil.which("runuser"):
        pytest.skip("running as root without runuser")
    return ["runuser", "-u", "nobody", "--"]


@pytest.mark.system
def test_files_history_add_cannot_read_are_counted_named_and_exit_1(data):
    prefix = _as_nobody()
    # a folder of its own in /tmp: pytest's are inside one only root may enter
    root = Path(tempfile.mkdtemp(prefix="jostle-unread-"))
    try:
        _unreadable_add(prefix, root, data)
    finally:
        for p in root.rglob("*"):
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        shutil.rmtree(root, ignore_errors=True)


def _unreadable_add(prefix, root, data):
    (root / "c1" / "secret").mkdir(parents=True)
    for n in ("pingpong_intra.jsonl", "pingpong_inter.jsonl"):
        shutil.copy(data / n, root / "c1" / n)
    shutil.copy(data / "pingpong_intra.jsonl", root / "c1" / "secret" / "x.jsonl")
    (root / "c1" / "gone.json").symlink_to("../nowhere.json")
    (root / "c1" / "pingpong_inter.jsonl").chmod(0o000)
    (root / "c1" / "secret").chmod(0o000)
    for p in (root, root / "c1"):
        p.chmod(0o777)
    env = {**os.environ, "PYTHONPATH": str(REPO / "python"), "JOSTLE_STORE_SPOOL": "spool"}
    env.pop("JOSTLE_DB", None)
    r = subprocess.run([*prefix, sys.executable, "-m", "jostle.cli", "history", "add", "c1",
                        "--db", "s.sqlite"], cwd=root, env=env,
                       capture_output=True, text=True, timeout=120)
    err = r.stderr
    assert r.returncode == 1, err
    assert "pingpong_inter.jsonl: left out: cannot be read: Permission denied" in err, err
    assert "secret: left out: a folder that cannot be read" in err, err
    assert "gone.json: left out: cannot be read: a link to nothing" in err, err
    assert "1 run(s) added" in err and "3 file(s) left out, 3 of them unreadable" in err, err
