"""`--record [DB]` of the commands that write campaigns, scans and checks (docs/history.md): what
the command wrote lands in the results store as `jostle history add` adds it (the same runs: a
run recorded twice, or recorded and then added, is one run); a store out of reach keeps the runs
in the spool, the command's status unchanged, for a later `history add`; a DB that cannot be a
store is bad input before anything is measured; a dry run records nothing."""

import json

import pytest

from conftest import run_cli
from jostle import cli
from jostle.records import store, store_spool
from checknode import handmade_site, jostle

pytestmark = pytest.mark.unit

PINGPONG = ["pingpong", "--sizes", "0:256", "--launcher", "", "--runs", "1"]


@pytest.fixture
def where(monkeypatch, tmp_path):
    """The test's folder as the working one (the default store, results/store.sqlite, is
    there), its own spool, and no store or site file from the environment."""
    for k in ("JOSTLE_DB", "JOSTLE_SITE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("JOSTLE_STORE_SPOOL", str(tmp_path / "spool"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def runs(db) -> list:
    with store.open_store(db, create=False) as st:
        return st.runs()


def pingpong(capsys, where, name, *more):
    return run_cli(capsys, *PINGPONG, "--output-dir", where / "out", "--campaign", "c",
                   "--name", name, *more)


def test_a_campaign_lands_in_the_store_once_however_often_it_is_recorded(capsys, fake_bench,
                                                                          where):
    db = where / "s.sqlite"
    rc, _, err = pingpong(capsys, where, "r", "--record", db)
    assert rc == 0, err
    assert "1 run(s) added to" in err
    [run] = runs(db)
    assert (run["name"], run["campaign"], run["kind"]) == ("r", "c", "run")
    rc, _, err = pingpong(capsys, where, "r", "--record", db)      # resumed: nothing new
    assert rc == 0 and "0 run(s) added" in err and "1 already there" in err
    rc, _, err = pingpong(capsys, where, "r2", "--record", db)     # the campaign's new run
    assert rc == 0 and "1 run(s) added" in err and "1 already there" in err
    assert sorted(r["name"] for r in runs(db)) == ["r", "r2"]
    # the same runs as `history add` finds: nothing added a second time
    rc, _, err = run_cli(capsys, "history", "add", where / "out" / "c", "--db", db)
    assert rc == 0 and "0 run(s) added" in err and "2 already there" in err


def test_without_db_the_store_is_the_default_one(capsys, fake_bench, where, monkeypatch):
    # --record before another option: it takes no value from it
    rc, _, err = run_cli(capsys, "pingpong", "--record", *PINGPONG[1:], "--output-dir",
                         where / "out", "--name", "r")
    assert rc == 0, err
    assert [r["name"] for r in runs(where / store.DEFAULT_PATH)] == ["r"]
    monkeypatch.setenv("JOSTLE_DB", str(where / "env.sqlite"))
    rc, _, err = run_cli(capsys, *PINGPONG, "--output-dir", where / "out", "--name", "r",
                         "--record")
    assert rc == 0 and [r["name"] for r in runs(where / "env.sqlite")] == ["r"]


def test_an_unreachable_store_keeps_the_runs_in_the_spool_for_history_add(capsys, fake_bench,
                                                                         where, monkeypatch):
    pytest.importorskip("psycopg")
    monkeypatch.setenv("JOSTLE_DB_CONNECT_TIMEOUT", "5")
    rc, _, err = pingpong(capsys, where, "r", "--record", "postgresql://127.0.0.1:1/x")
    assert rc == 0, err                      # measured: the command's status stays
    [line] = [x for x in err.splitlines() if "spool" in x]
    assert "cannot be reached" in line and str(where / "spool") in line
    down = "postgresql://127.0.0.1:1/x"
    assert len(list((where / "spool").rglob("*.json"))) == 1
    assert len(store_spool.pending(where / "spool", down)) == 1    # kept for that store
    assert (where / "out" / "c" / "r.jsonl").exists()
    db = where / "s.sqlite"
    rc, _, err = run_cli(capsys, "history", "add", "--db", db)      # another store: not its
    assert rc == 0 and "0 run(s) added" in err and "(0 from the spool)" in err, err
    assert len(store_spool.pending(where / "spool", down)) == 1
    rc, _, err = run_cli(capsys, "history", "add", where / "out" / "c", "--db", db)
    assert rc == 0 and "1 run(s) added" in err
    assert [r["name"] for r in runs(db)] == ["r"]
    rc, _, err = pingpong(capsys, where, "r", "--record", db)
    assert rc == 0 and "0 run(s) added" in err and len(runs(db)) == 1


@pytest.mark.parametrize("value, named", [
    ("{tmp}/none/s.sqlite", "does not exist"),
    ("{tmp}", "is a directory"),
    ("postgresql://db.site:99999/jostle", "port"),
    ("postgresql://jostle:secret@db.site/jostle?bogus=1", "bogus"),
    ("postgresql://db site/jostle", "spaces"),
])
def test_a_db_that_cannot_be_a_store_exits_2_before_anything_is_measured(
        capsys, fake_bench, where, value, named):
    value = value.format(tmp=where)
    rc, out, err = pingpong(capsys, where, "r", "--record", value)
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert "--record" in err and named in err.lower() and "secret" not in err
    assert value.replace("secret", "***") in err
    assert not (where / "out").exists() and not (where / "spool").exists()


def test_a_dry_run_records_nothing(capsys, fake_bench, where):
    rc, _, err = pingpong(capsys, where, "r", "--record", where / "s.sqlite", "--dry-run")
    assert rc == 0, err
    assert not (where / "s.sqlite").exists() and not (where / "spool").exists()


def test_every_command_that_writes_runs_or_checks_takes_record(where):
    studies = ["pingpong", "bcast", "cholesky", "nuioa", "overlap", "run", "scan", "check",
               *(f"contention {s}" for s in ("fig1", "fig2", "fig3", "fig4", "usecases"))]
    for command in studies:
        argv = command.split()
        assert cli.build_parser().parse_args([*argv, "--record"]).record is True, command
        assert cli.build_parser().parse_args([*argv, "--record", "s.sqlite"]).record == \
            "s.sqlite"
        assert cli.build_parser().parse_args(argv).record is None


def test_save_reference_writes_no_record_to_add(capsys, where):
    rc, _, err = run_cli(capsys, "check", "--site", where / "site.toml", "--save-reference",
                         "--class", "cpu", "--record", where / "s.sqlite")
    assert rc == 2 and "--record" in err and "--save-reference" in err
    assert not (where / "s.sqlite").exists()


# ---------------------------------------------------------------- with real runs

@pytest.mark.mpi
def test_a_simulated_scan_adds_its_runs(capsys, built, where):
    built("simgrid")
    db = where / "s.sqlite"
    rc = cli.main(["scan", "--simulate", "--nodes", "4", "--quick", "--no-confirm",
                   "--output-dir", str(where), "--campaign", "scan1", "--record", str(db)])
    err = capsys.readouterr().err
    assert rc == 0, err
    [run] = runs(db)
    assert run["campaign"] == "scan1" and run["name"].startswith("links-shift-n4")
    assert run["node"] == "node-0,node-1,node-2,node-3"


@pytest.mark.mpi
def test_a_check_adds_the_record_it_wrote_to_the_spool(capsys, where):
    site = handmade_site(where)     # this machine, the memory latency's reference by hand
    db = where / "s.sqlite"
    r = jostle("check", "--site", site, "--checks", "memory_latency", "--budget", "8",
               "--timeout", "120", "--no-busy-check", "--spool", where / "ck", "--record", db,
               "--format", "json", env={"JOSTLE_STORE_SPOOL": str(where / "spool")})
    # its verdict, whatever the store did (could not judge: a busy machine stopped its step)
    assert r.returncode in (0, 1, 3), r.stderr
    rec = json.loads(r.stdout)
    [run] = runs(db)
    assert (run["kind"], run["class"], run["source"]) == ("check", "here", rec["record"])
    assert run["verdict"] == {0: "healthy", 1: "unhealthy", 3: "skipped"}[r.returncode]
    # the spool's record is that run: `history add` of the check's spool adds nothing
    rc, _, err = run_cli(capsys, "history", "add", where / "ck", "--db", db)
    assert rc == 0 and "0 run(s) added" in err and "1 already there" in err
