"""`jostle compare` and `jostle baseline` on campaigns that hold both MPI libraries, as the main
job (`jostle run`) makes them: real ping-pongs with Open MPI and MPICH into one campaign, twice;
the comparison is judged library by library (exit 0, 1 or 3, never 2), and the first campaign
kept as a baseline checks the second."""

import json

import pytest

from jostle import cli

pytestmark = pytest.mark.mpi


def jostle(capsys, *argv):
    try:
        rc = cli.main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    out = capsys.readouterr()
    return rc, out.out, out.err


def campaign(capsys, tmp_path, name, built):
    for flavor in ("openmpi", "mpich"):
        rc, _, err = jostle(capsys, "pingpong", "--mpi", flavor, "--bench", built(flavor),
                            "--sizes", "1,64,1K", "--min-reps", "20", "--max-time", "0.05",
                            "--runs", "2", "--output-dir", tmp_path, "--campaign", name,
                            "--name", f"pp-{flavor}", "--timeout", "120", "--quiet")
        assert rc == 0, err
    return tmp_path / name


def test_two_campaigns_of_both_libraries_compare_and_keep_a_baseline(capsys, tmp_path, built,
                                                                       monkeypatch):
    monkeypatch.delenv("JOSTLE_BENCH", raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    a = campaign(capsys, tmp_path, "run-A", built)
    b = campaign(capsys, tmp_path, "run-B", built)
    rc, out, err = jostle(capsys, "compare", a, b)
    assert rc in (0, 1, 3), err
    assert "== MPICH 4" in out and "== Open MPI 4" in out, out
    rc, out, err = jostle(capsys, "compare", a, b, "--format", "json")
    got = json.loads(out)
    assert len(got["libraries"]) == 2 and got["exit_status"] == rc
    # every point's test is the latency (rtt and bandwidth beside it): 3 sizes x 2 libraries
    assert sum(got["counts"].values()) == 6
    bl = tmp_path / "baselines"
    rc, _, err = jostle(capsys, "baseline", "save", a, "--name", "main", "--baselines", bl)
    assert rc == 0, err
    assert len(json.loads((bl / "main.json").read_text())["machines"]) == 2
    rc, out, err = jostle(capsys, "baseline", "check", b, "--name", "main", "--baselines", bl)
    assert rc in (0, 1, 3), err
    assert "== MPICH 4" in out and "== Open MPI 4" in out
    # one library alone against the other's campaign: they share none, named (exit 2)
    rc, out, err = jostle(capsys, "compare", a / "pp-openmpi-r1.jsonl", b / "pp-mpich-r1.jsonl")
    assert rc == 2 and "Open MPI 4" in err and "MPICH 4" in err and out == ""
