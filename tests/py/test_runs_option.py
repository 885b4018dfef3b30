"""--runs K on every study that launches MPI jobs: each run launched K times into one campaign,
named NAME-r1 … NAME-rK (campaign.repeated), so that `jostle compare` measures the variation
between jobs; a bad K is refused before anything is planned."""

import re

import pytest

from jostle import cli

# each study with the arguments that keep its dry run small and on the fake bench
STUDIES = {
    "pingpong": ["--sizes", "1:64", "--launcher", ""],
    "contention": ["fig1", "--quick", "--launcher", ""],
    "overlap": ["--quick", "--ranks", "2", "--launcher", ""],
    "nuioa": ["--quick", "--mpi", "openmpi"],   # the built bench: its plan reads --topo
    "bcast": ["--ranks", "2", "--launcher", ""],
    "cholesky": ["--launcher", ""],
}


@pytest.fixture
def bench(monkeypatch, fake_bench, study):
    """The fake bench, except for nuioa (the built one: nothing launches in a dry run)."""
    if study == "nuioa":
        monkeypatch.delenv("JOSTLE_BENCH")


def dry_run(capsys, tmp_path, study, *extra):
    rc = cli.main([study, *STUDIES[study], *extra, "--dry-run", "--output-dir", str(tmp_path)])
    out = capsys.readouterr()
    names = re.findall(r"--output \S*/([^/\s]+)\.jsonl", out.out)
    return rc, names, out.err


@pytest.mark.parametrize("study", sorted(STUDIES))
def test_runs_2_plans_every_run_twice_with_the_job_suffix(capsys, bench, tmp_path, study):
    rc, once, _ = dry_run(capsys, tmp_path, study)
    assert rc == 0 and once
    rc, twice, err = dry_run(capsys, tmp_path, study, "--runs", "2")
    assert rc == 0
    assert len(twice) == 2 * len(once)
    assert sorted(twice) == sorted(f"{n}-r{k}" for n in once for k in (1, 2))
    assert f"{len(twice)} run(s) to make" in err
    assert not list(tmp_path.rglob("*.json*"))   # a dry run writes nothing


@pytest.mark.parametrize("study", sorted(STUDIES))
@pytest.mark.parametrize("bad", ["0", "x", "-1", "1.5"])
def test_a_bad_runs_is_refused_naming_the_value(capsys, bench, tmp_path, study, bad):
    with pytest.raises(SystemExit) as e:
        cli.main([study, *STUDIES[study], "--runs", bad, "--dry-run",
                  "--output-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert "--runs" in err and f"'{bad}'" in err and "Traceback" not in err
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


@pytest.mark.parametrize("study", ["bcast", "cholesky"])
def test_runs_is_refused_for_a_simulated_run(capsys, bench, tmp_path, study):
    rc = cli.main([study, "--simulate", "--runs", "2", "--dry-run", "--output-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and "--runs 2" in err and "deterministic" in err
