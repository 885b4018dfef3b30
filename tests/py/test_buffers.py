"""The state of the buffers (--buffers osu|distinct|echo|cold): real 2-rank runs per state, what
--check makes observable about each, bad input, and the figure of what the state costs."""

import pytest

from jostle.cli import main
from jostle.records.results import load_run

from mpijobs import run_bench, validate

pytestmark = pytest.mark.mpi
STATES = ("osu", "distinct", "echo", "cold")


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
@pytest.mark.parametrize("state", STATES)
def test_each_state_is_recorded_and_checked(tmp_path, flavor, state):
    out = tmp_path / "r.jsonl"
    p = run_bench("pingpong", "--sizes", "1,4K", "--buffers", state, "--check", "--min-reps",
                  "20", "--max-time", "0.1", out=out, flavor=flavor)
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    assert set(r.points["buffers"]) == {state}
    assert r.meta["buffers"]["state"] == state and r.meta["buffers"]["mode"] == "pingpong"
    assert f"buffers {state}" in p.stdout.splitlines()[1]  # the table's heading names it


@pytest.mark.parametrize("mode", ["stream", "bidir"])
@pytest.mark.parametrize("state", ["osu", "distinct"])
def test_window_states_are_recorded_and_checked(tmp_path, mode, state):
    out = tmp_path / "r.jsonl"
    p = run_bench("pingpong", "--sizes", "64,8K", "--mode", mode, "--window", "8", "--buffers",
                  state, "--check", "--min-reps", "10", "--max-time", "0.1", out=out)
    assert p.returncode == 0, p.stderr
    assert set(load_run(out).points["buffers"]) == {state}


def test_one_sided_modes_record_osu_by_default(tmp_path):
    out = tmp_path / "r.jsonl"
    p = run_bench("pingpong", "--sizes", "64", "--mode", "put", "--min-reps", "10",
                  "--max-time", "0.1", out=out)
    assert p.returncode == 0, p.stderr
    assert set(load_run(out).points["buffers"]) == {"osu"}


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
@pytest.mark.parametrize("state", ["echo", "osu"])
def test_check_sees_which_buffer_the_answer_comes_from(flavor, state):
    """Each side writes its own payload (the sample, the message and the side that wrote it):
    side 0 checks the answer against what it sent itself under echo, and against what side 1
    wrote into its own send buffer under osu; side 1 checks what arrived.  Were the answer sent
    from the other buffer than the state says (osu echoing the dirty receive buffer, or echo
    answering from a buffer of its own), the first sample would fail --check: exit 1 with the
    byte and the side named.  Every size crosses Open MPI's and MPICH's eager/rendezvous
    switch."""
    p = run_bench("pingpong", "--sizes", "1,256,64K,1M", "--buffers", state, "--check",
                  "--min-reps", "5", "--max-time", "0.05", "--warmup", "0", flavor=flavor)
    assert p.returncode == 0, p.stderr
    assert "--check" not in p.stderr


# Refused before MPI starts: judged through --validate (no launch), with both builds; one case
# per library under the launcher below.
@pytest.mark.unit
@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
@pytest.mark.parametrize("args,needle", [
    (["--buffers", "hot"], "'hot'"),
    (["--buffers", "echo", "--mode", "put"], "--buffers echo"),
    (["--buffers", "echo", "--mode", "stream"], "--mode stream"),
    (["--cold"], "--buffers cold"),
    (["--statistic", "avg"], "'avg'"),
])
def test_bad_buffers_exit_2(tmp_path, flavor, args, needle):
    p = validate("pingpong", "--sizes", "4", *args, "--output", tmp_path / "x.jsonl",
                 flavor=flavor)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert needle in p.stderr
    assert not list(tmp_path.iterdir())  # nothing that looks complete, nothing partial


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_bad_buffers_under_the_launcher_are_refused_as_validate_says(tmp_path, flavor):
    out = tmp_path / "x.jsonl"
    args = ["--sizes", "4", "--buffers", "echo", "--mode", "put"]
    said = validate("pingpong", *args, "--output", out, flavor=flavor).stderr.strip()
    p = run_bench("pingpong", *args, out=out, flavor=flavor)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert said.startswith("jostle-bench: error: ") and said in p.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.unit
@pytest.mark.parametrize("argv,needle", [
    (["--buffers", "hot"], "'hot'"),
    (["--buffers", "osu,osu"], "twice"),
    (["--pages", "giant"], "'giant'"),        # the kind of pages (test_pages.py), the same way
    (["--pages", "huge,huge"], "twice"),
    (["--buffers", "echo", "--mode", "put"], "--buffers echo"),
    # judged by jostle-bench --validate-options for a run on other hosts (written once, in C)
    (["--buffers", "echo", "--mode", "get", "--hosts", "n1,n2"], "--buffers echo"),
    (["--order", "sideways", "--hosts", "n1,n2"], "'sideways'"),
    (["--percentiles", "0,101"], "'0,101'"),
    (["--pairs", "1", "--mode", "put", "--hosts", "n1,n2"], "--mode put"),
    (["--statistic", "avg"], "'avg'"),
])
def test_cli_bad_buffers_exit_2(capsys, tmp_path, argv, needle):
    try:
        rc = main(["pingpong", "--sizes", "4", "--output-dir", str(tmp_path), *argv])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    assert rc == 2 and needle in err
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_cli_runs_every_state_and_draws_what_it_costs(tmp_path, capsys, monkeypatch, built):
    bench = built()
    monkeypatch.delenv("JOSTLE_BENCH", raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    argv = ["pingpong", "--mpi", "openmpi", "--bench", str(bench), "--buffers",
            "osu,echo,distinct,cold", "--sizes", "1,64,4K", "--min-reps", "10", "--max-time",
            "0.05", "--output-dir", str(tmp_path), "--campaign", "b", "--timeout", "120",
            "--runs", "1"]
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 0, err
    camp = tmp_path / "b"
    for st in ("osu", "echo", "distinct", "cold"):
        [run] = camp.glob(f"pingpong-intra-pingpong-*-{st}.jsonl")  # the name hashes the options
        assert set(load_run(run).points["buffers"]) == {st}
    fig = camp / "figures" / "pingpong-buffers-pingpong.png"
    assert fig.exists() and str(fig) in out
    # The same command resumes the campaign: every run is complete, none is run again.
    assert main(argv) == 0
    assert capsys.readouterr().err.count("already complete") == 4
    # The report shows the figure.
    assert main(["report", str(camp)]) == 0
    capsys.readouterr()
    page = (camp / "report.html").read_text()
    assert 'id="pingpong-buffers-pingpong"' in page and "What the state of the buffers" in page
