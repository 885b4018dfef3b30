import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from conftest import DATA, REPO, run_cli
from jostle.cli import build_parser

pytestmark = pytest.mark.unit


def test_the_parser_imports_no_numerical_library():
    """`jostle --help` and every command's parser (a job script's `jostle check`, `status`)
    start without pandas, numpy or matplotlib: their import is about half a second of CPU
    (jostle.lazy). A module-level use of one (a dataclass default of pd.DataFrame) pulled
    pandas into every start-up once."""
    code = ("import sys, json; from jostle import cli; cli.build_parser(); "
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    assert not {"pandas", "numpy", "matplotlib"} & set(json.loads(r.stdout)), r.stdout


@pytest.mark.parametrize("argv,named", [
    (["pingpong", "--sizes", "-4"], "'-4'"),
    (["pingpong", "--sizes", "abc"], "'abc'"),
    (["pingpong", "--sizes", "0:1K:0"], "step"),
    (["pingpong", "--sizes", "900G"], "900G"),                 # more than this host's memory
    (["pingpong", "--ranks", "1"], "'1'"),
    (["pingpong", "--ranks", "two"], "'two'"),
    (["pingpong", "--precision", "2"], "'2'"),
    (["pingpong", "--min-reps", "0"], "'0'"),
    (["pingpong", "--comm-core", "x,1"], "'x,1'"),
    (["pingpong", "--mode", "sideways"], "'sideways'"),
    (["pingpong", "--hosts", "a,,b"], "'a,,b'"),
    (["pingpong", "--name", "../x"], "'../x'"),
    (["pingpong", "--hosts", "a,b,c"], "3 hosts"),
    (["plot", "/nonexistent/x.jsonl"], "/nonexistent/x.jsonl"),
    (["plot", "--format", "gif", "."], "'gif'"),
    (["report", "/nonexistent/dir"], "/nonexistent/dir"),
    (["run", "--steps", "machine,bogus"], "'bogus'"),
    (["nosuchcommand"], "nosuchcommand"),
])
def test_bad_input_exits_2_naming_the_value(capsys, fake_bench, tmp_path, argv, named):
    rc, out, err = run_cli(capsys, *argv, *(["--output-dir", str(tmp_path)] if argv[0] in ("pingpong", "run") else []))
    assert rc == 2, err
    assert named in err


def test_too_large_size_says_what_is_allowed(capsys, fake_bench):
    rc, _, err = run_cli(capsys, "pingpong", "--sizes", "0:900G")
    assert rc == 2 and "exceeds this host's memory" in err and "allowed: sizes up to" in err


def test_unwritable_output_dir_exits_2(capsys, fake_bench, tmp_path):
    (tmp_path / "f").write_text("")
    rc, _, err = run_cli(capsys, "pingpong", "--sizes", "4", "--launcher", "", "--output-dir",
                         str(tmp_path / "f"))
    assert rc == 2 and "not writable" in err and str(tmp_path / "f") in err


def test_dry_run_prints_the_launcher_line(capsys, fake_bench, tmp_path):
    rc, out, err = run_cli(capsys, "pingpong", "--sizes", "0:1K", "--launcher", "mpirun -np 2",
                           "--output-dir", str(tmp_path), "--name", "n", "--min-reps", "20", "--dry-run",
                           "--runs", "1")
    assert rc == 0
    assert out.strip() == (f"mpirun -np 2 {fake_bench} pingpong --sizes 0:1K --mode pingpong "
                           f"--min-reps 20 --output {tmp_path}/adhoc/n.jsonl --progress --quiet")
    # 12 sizes, each at most 2 s (the default cap) after its 120 round trips
    assert re.search(r"dry run: 1 run\(s\) to make, 0 already complete .*at most about 24 s$", err)
    assert not (tmp_path / "adhoc").exists()


def test_preset_maps_to_the_study_sweeps(capsys, fake_bench, tmp_path):
    rc, out, _ = run_cli(capsys, "pingpong", "--preset", "fine", "--launcher", "", "--dry-run",
                         "--output-dir", str(tmp_path))
    assert rc == 0 and "--sizes 16:20K:16" in out


def test_the_same_pingpong_twice_resumes_and_a_preset_is_capped(capsys, fake_bench, tmp_path):
    args = ["pingpong", "--sizes", "0:256", "--launcher", "", "--output-dir", str(tmp_path)]
    assert run_cli(capsys, *args)[0] == 0
    rc, _, err = run_cli(capsys, *args)
    assert rc == 0 and "already complete" in err
    assert len(list((tmp_path / "adhoc").glob("*-r[123].jsonl"))) == 3   # 3 launches by default
    rc, out, _ = run_cli(capsys, *args[:-2], "--preset", "seed", "--sizes", "0:1K", "--dry-run")
    assert rc == 0 and "--sizes 0:1K:1 " in out   # the seed's first sweep only


def test_pingpong_end_to_end_with_the_fake_bench(capsys, fake_bench, tmp_path):
    args = ["pingpong", "--sizes", "0:256", "--launcher", "", "--output-dir", str(tmp_path),
            "--campaign", "c", "--name", "r", "--runs", "1"]
    rc, out, err = run_cli(capsys, *args)
    assert rc == 0, err
    assert (tmp_path / "c" / "r.jsonl").exists()
    assert "# Size" not in out and out.startswith("r: 1 launch (--runs 1)")   # the bench's
    # table only with --verbose; the summary always
    # not a terminal: one progress line for the run, nothing redrawn, with its headline
    lines = [x for x in err.splitlines() if "run 1/1" in x]
    assert len(lines) == 1 and "\r" not in err
    assert re.fullmatch(r"jostle: run 1/1 r: ok, 10/10 points, [0-9.]+ s \(1/1 runs in [0-9:]+\): "
                        r"latency [0-9.]+ µs at \d+ B, bandwidth [0-9.]+ GB/s at 256 B", lines[0]), lines[0]
    rc, out, err = run_cli(capsys, *args)
    assert rc == 0 and "already complete" in err
    rc, out, err = run_cli(capsys, *args[:-3], "v", "--verbose")
    assert rc == 0 and "# Size" in out


@pytest.mark.pages
def test_plot_refuses_incomplete_then_allows_it(capsys, data, tmp_path):
    shutil.copy(data / "interrupted.jsonl.partial", tmp_path / "i.jsonl.partial")
    rc, _, err = run_cli(capsys, "plot", str(tmp_path))
    assert rc == 1 and "i.jsonl.partial is incomplete" in err and "--allow-incomplete" in err
    rc, out, err = run_cli(capsys, "plot", "--allow-incomplete", str(tmp_path), "-o", str(tmp_path / "f"))
    assert rc == 0 and "warning" in err and "incomplete" in err
    assert (tmp_path / "f" / "pingpong-pow2.png").exists()


@pytest.fixture(scope="module")
def plotted(tmp_path_factory):
    """`jostle plot` of a campaign of two complete ping-pong runs and an interrupted one, run
    once: (the campaign, exit status, stdout, stderr)."""
    import contextlib
    import io
    from jostle.cli import main
    camp = tmp_path_factory.mktemp("plot") / "c1"
    camp.mkdir()
    for name in ("pingpong_intra.jsonl", "pingpong_inter.jsonl"):
        shutil.copy(DATA / name, camp / name)
    shutil.copy(DATA / "interrupted.jsonl.partial", camp / "i.jsonl.partial")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["plot", str(camp)])
    return camp, rc, out.getvalue(), err.getvalue()


@pytest.mark.slow
@pytest.mark.pages
def test_plot_and_report_commands(capsys, plotted):
    campaign_dir, rc, out, _ = plotted
    assert rc == 0 and out.split() == [str(campaign_dir / "figures" / f"pingpong-{r}.{e}")
                                       for r in ("bytes", "fine", "pow2") for e in ("png", "svg")]
    rc, out, _ = run_cli(capsys, "report", str(campaign_dir))
    assert rc == 0 and out.strip() == str(campaign_dir / "report.html")


def test_malformed_data_exits_1_with_file_line(capsys, data):
    rc, _, err = run_cli(capsys, "plot", str(data / "malformed.jsonl"))
    assert rc == 1 and "malformed.jsonl:3:" in err


@pytest.mark.slow
@pytest.mark.pages
def test_run_does_every_step_and_says_where_the_report_is(quick_campaign):
    rc, out, err, camp = quick_campaign
    assert rc == 0, err
    assert "CPU       Fake CPU @ 2.5GHz" in err and f"report: {camp / 'report.html'}" in err
    assert (camp / "machine.json").exists() and (camp / "pingpong-intra-r1.jsonl").exists()
    assert (camp / "figures" / "pingpong-fine.svg").exists()
    assert '<section id="figures">' in (camp / "report.html").read_text()


def test_every_subcommand_has_help_with_examples():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"run", "machine", "pingpong", "plot", "report"} <= set(sub.choices)
    for name in ("run", "pingpong", "plot", "report"):
        assert "examples:" in sub.choices[name].format_help()


@pytest.mark.parametrize("argv,says", [
    (["pingpong", "--sise", "0:1K"], "jostle pingpong: error: unknown option '--sise' (did you mean --sizes?)"),
    (["pingpong", "--size", "0:1K"], "unknown option '--size' (did you mean --sizes?)"),  # no abbreviation
    (["pingpon"], "jostle: error: unknown command 'pingpon' (did you mean pingpong?)"),
    (["pingpong", "--mode", "strem"], "'strem' (did you mean stream?)"),
])
def test_argparse_errors_are_one_line_with_a_suggestion(capsys, argv, says):
    rc, out, err = run_cli(capsys, *argv)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and says in err and "usage:" not in err, err


def test_input_mistakes_are_one_line_and_exit_2(capsys, fake_bench, tmp_path, campaign_dir):
    (tmp_path / "empty").mkdir()
    cases = [
        (["report", str(tmp_path / "empty")], "holds no .jsonl run file"),
        (["plot", str(tmp_path / "empty")], "holds no .jsonl run file"),
        (["report", str(campaign_dir), "-o", "/nonexistent/dir/r.html"], "'/nonexistent/dir' does not exist"),
        (["bcast", "--nodes", "4:16", "--launcher", ""], "--nodes is only used with --simulate"),
        (["cholesky", "--bandwidth", "1Gbps", "--launcher", ""], "--bandwidth is only used with --simulate"),
        (["bcast", "--jobs", "2", "--launcher", ""], "--jobs is only used with --simulate"),
        (["bcast", "--simulate", "--jobs", "0"], "--jobs"),
    ]
    for argv, says in cases:
        rc, _, err = run_cli(capsys, *argv)
        assert rc == 2 and says in err and err.count("\n") == 1, (argv, err)
    assert not pathlib.Path("/nonexistent/dir").exists()


@pytest.mark.pages
def test_plot_draws_the_complete_runs_and_names_a_partial_one(plotted):
    campaign_dir, rc, out, err = plotted
    assert rc == 0 and "pingpong-pow2.png" in out
    assert f"{campaign_dir / 'i.jsonl.partial'} left out: incomplete" in err


def test_run_counts_every_steps_runs_before_the_first(capsys, fake_bench, tmp_path):
    """The progress line's total is the whole job's from the first run on, not step by step."""
    rc, out, err = run_cli(capsys, "run", "--launcher", "", "--output-dir", str(tmp_path),
                           "--campaign", "t", "--steps", "pingpong,overlap")
    assert rc == 0, err
    total = int(re.search(r"jostle: 2 steps, (\d+) runs, in ", err).group(1))
    ran = re.findall(r"jostle: run \d+/\d+ \S+: ok.*?\((\d+)/(\d+) runs in", err)
    assert total > 1 and len(ran) == total
    assert [int(t) for _, t in ran] == [total] * total              # the same total throughout
    assert [int(d) for d, _ in ran] == list(range(1, total + 1))


def test_run_dry_run_lists_every_steps_runs_and_launches_nothing(capsys, fake_bench, tmp_path):
    rc, out, err = run_cli(capsys, "run", "--launcher", "", "--output-dir", str(tmp_path),
                           "--campaign", "d", "--steps", "pingpong,overlap", "--dry-run")
    assert rc == 0, err
    total = int(re.search(r"jostle: dry run: 2 steps, (\d+) runs in ", err).group(1))
    assert total > 1 and len(out.strip().splitlines()) == total     # one command line a run
    assert err.count("run(s) to make") == 2                          # each step's own estimate
    assert not list((tmp_path / "d").glob("*.jsonl*"))                # nothing launched
