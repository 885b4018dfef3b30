"""`jostle contention`: the plan of each study, bad input, a campaign end to end against a fake
jostle-bench contention, the `jostle run` step, and one run of the real binary."""

import argparse
import os
import re
import sys

import pytest

from jostle.cli import main
from jostle.commands import contention as cc
from jostle.commands._common import settings
from jostle.studies import contention
from jostle.commands import run as run_cmd
from jostle.records.results import load_run

pytestmark = pytest.mark.unit
HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = f"""#!{sys.executable}
# jostle-bench contention, faked: writes contention_lines.run_lines() for its arguments.
import json, os, sys
sys.path.insert(0, {HERE!r})
from contention_lines import run_lines
argv = sys.argv[1:]
if argv[:1] == ["--machine"]:
    print(json.dumps({{"cpu": "Fake", "cores": 4, "numa_nodes": 2, "nics": [{{"name": "ib0", "numa": 1}}]}}))
    sys.exit(0)
if argv[:1] == ["--version"]:
    print(json.dumps({{"mpi_flavor": "openmpi", "benchmarks": ["pingpong", "contention"]}}))
    sys.exit(0)
if argv[:1] == ["--parse-sizes"]:
    print(json.dumps([int(x) for x in argv[1].split(",")]))
    sys.exit(0)
opt = {{a: b for a, b in zip(argv, argv[1:]) if a.startswith("--")}}
unit = {{"K": 1 << 10, "M": 1 << 20}}
sizes = [int(s[:-1]) * unit[s[-1]] if s[-1] in unit else int(s) for s in opt["--sizes"].split(",")]
lines = run_lines(["jostle-bench", *argv], kernel=opt["--kernel"], sizes=sizes,
                  cores=int(opt["--compute-cores"]), ai=float(opt.get("--ai", 1 / 12)),
                  warnings=["oversubscribed"] if "--oversubscribe" in argv else [])
with open(opt["--output"] + ".partial", "w") as f:
    f.writelines(json.dumps(r) + "\\n" for r in lines)
os.rename(opt["--output"] + ".partial", opt["--output"])
"""
M64 = 64 << 20
NODE36 = {"cores": 36, "numa_nodes": 4, "nics": [{"name": "mlx5_0", "numa": 0}]}
VM = {"cores": 2, "numa_nodes": 1, "nics": [{"name": "eth0", "numa": 0}]}


@pytest.fixture
def fake(tmp_path, monkeypatch):
    p = tmp_path / "fake-contention"
    p.write_text(FAKE)
    p.chmod(0o755)
    monkeypatch.setenv("JOSTLE_BENCH", str(p))
    return p


def cli(capsys, *argv):
    try:
        rc = main(list(argv))
    except SystemExit as e:
        rc = e.code
    out = capsys.readouterr()
    return rc, out.out, out.err


def options(study, *argv, runs="1"):
    """The settings `jostle contention STUDY ARGV` hands its study (one launch a run unless
    RUNS says: the plans below are about what each run is)."""
    p = argparse.ArgumentParser()
    cc.add_options(p, study)
    return settings(contention.Settings,
                    p.parse_args([*argv, *(["--runs", runs] if runs else [])]))


def arg(run, flag):
    return run.args[run.args.index(flag) + 1] if flag in run.args else None


def test_fig1_sweeps_every_free_core_with_the_papers_placement():
    runs = contention.plan("fig1", options("fig1", "--hosts", "a,b"), NODE36)
    assert [arg(r, "--compute-cores") for r in runs] == [str(n) for n in range(36)]
    r = runs[5]
    assert r.name == "fig1-triad-c05" and r.benchmark == "contention" and r.hosts == ["a", "b"]
    assert arg(r, "--sizes") == "4,64M" and arg(r, "--kernel") == "triad"
    assert (arg(r, "--comm-core"), arg(r, "--comm-mem"), arg(r, "--compute-mem")) == ("far", "near", "near")
    assert "--oversubscribe" not in r.args and "--phase-time" not in r.args and r.timeout > 60
    # two ranks on one 36-core host: 17 free cores each
    assert len(contention.plan("fig1", options("fig1"), NODE36)) == 18


def test_quick_on_a_two_core_vm():
    runs = contention.plan("fig1", options("fig1", "--quick"), VM)
    assert [r.name for r in runs] == ["fig1-triad-c00-quick", "fig1-triad-c01-quick", "fig1-triad-c02-quick"]
    assert ["--oversubscribe" in r.args for r in runs] == [False, True, True]
    r = runs[1]
    assert (arg(r, "--phase-time"), arg(r, "--min-reps"), arg(r, "--max-time")) == ("0.2", "20", "0.4")
    assert int(arg(r, "--array-bytes")) <= 8 << 20
    assert "--comm-core" not in r.args                  # one NUMA node: jostle-bench's defaults
    # non-temporal stores are passed on and named, so they never resume a normal run
    runs = contention.plan("fig1", options("fig1", "--quick", "--kernel", "copy", "--stores", "nt"), VM)
    assert [r.name for r in runs][1] == "fig1-copy-nt-c01-quick" and arg(runs[1], "--stores") == "nt"
    r = contention.plan("fig1", options("fig1", "--quick", "--phase-time", "0.5", "--max-cores", "0"), VM)[0]
    assert arg(r, "--phase-time") == "0.5" and r.args.count("--phase-time") == 1


def test_three_launches_by_default_share_each_points_time():
    """K = 3 launches of each run by default (the launch as the unit), each given a third of a
    phase's time and of the point's --max-time and repetitions (rounded up: at 64 MiB the
    repetitions make a point's length), its precision widened by √3: the K launches measure
    about as long as one did."""
    runs = contention.plan("fig1", options("fig1", "--quick", runs=None), VM)
    assert [r.name for r in runs[:4]] == [f"fig1-triad-c00-quick-r{k}" for k in (1, 2, 3)] + [
        "fig1-triad-c01-quick-r1"]
    assert len(runs) == 9
    r = runs[0]
    assert (arg(r, "--phase-time"), arg(r, "--min-reps"), arg(r, "--max-time"),
            arg(r, "--precision")) == ("0.06667", "7", "0.1333", "0.01732")
    assert all(r.args.count("--phase-time") == 1 for r in runs)
    r = contention.plan("fig1", options("fig1", "--max-cores", "0", "--phase-time", "0.9",
                                        runs="3"), NODE36)[0]
    assert (arg(r, "--phase-time"), arg(r, "--min-reps"), arg(r, "--max-time")) == (
        "0.3", "34", "0.6667")                     # jostle-bench's 100 samples and 2 s, in 3


def test_fig2_has_the_four_placements_per_core_count():
    runs = contention.plan("fig2", options("fig2", "--max-cores", "1"), NODE36)
    assert [(arg(r, "--comm-core"), arg(r, "--comm-mem"), arg(r, "--compute-mem")) for r in runs[::2]] == [
        ("near", "near", "near"), ("near", "far", "far"), ("far", "near", "near"), ("far", "far", "far")]
    assert len(runs) == 8 and runs[3].name == "fig2-triad-corenear-memfar-c01"


def test_fig3_fig4_usecases(fake):
    runs = contention.plan("fig3", options("fig3", "--cores", "5"), NODE36, fake)
    assert len(runs) == 1 and arg(runs[0], "--sizes") == ",".join(str(4 ** k) for k in range(1, 14))
    assert arg(runs[0], "--compute-cores") == "5"
    runs = contention.plan("fig4", options("fig4", "--ai", "1/12,1,16", "--hosts", "a,b"), NODE36)
    assert [arg(r, "--ai") for r in runs] == [repr(1 / 12), "1", "16"]
    assert {arg(r, "--compute-cores") for r in runs} == {"35"} and {arg(r, "--kernel") for r in runs} == {"triad"}
    runs = contention.plan("usecases", options("usecases", "--cores", "3"), NODE36)
    assert [arg(r, "--kernel") for r in runs] == ["cg", "gemm", "triad"]
    assert [r.name for r in runs] == ["usecases-cg-c03", "usecases-gemm-c03", "usecases-triad-c03"]


@pytest.mark.parametrize("argv,named", [
    (["fig1", "--kernel", "stream"], "'stream'"),
    (["usecases", "--kernels", "cg,foo"], "'foo'"),
    (["fig1", "--ai", "0.05"], "'0.05'"),
    (["fig4", "--ai", "1,1/20"], "'1/20'"),
    (["fig1", "--ai", "x"], "'x'"),
    (["fig1", "--max-cores", "-1"], "'-1'"),
    (["fig1", "--max-cores", "two"], "'two'"),
    (["fig3", "--cores", "0"], "'0'"),
    (["fig1", "--max-cores", "3", "--oversubscribe", "no"], "at most 1 compute core"),
    (["fig2", "--comm-core", "near"], "--comm-core"),          # fig2 sets the placement itself
    (["fig1", "--compute-mem", "nowhere"], "'nowhere'"),
    (["fig1", "--hosts", "a,b,c"], "3 hosts"),
    (["fig5"], "fig5"),
    (["fig1", "--stores", "sometimes"], "'sometimes'"),
])
def test_bad_input_exits_2(capsys, fake, tmp_path, argv, named):
    rc, _, err = cli(capsys, "contention", *argv, "--output-dir", str(tmp_path), "--launcher", "", "--dry-run")
    assert rc == 2, err
    assert named in err


@pytest.mark.parametrize("argv,named", [
    (["fig1", "--ai", "1", "--kernel", "copy"], "'copy'"),
    (["fig1", "--stores", "nt", "--kernel", "cg"], "'cg'"),
    (["fig3", "--stores", "nt", "--ai", "1"], "--ai '1'"),
    (["fig1", "--pairs", "8", "--comm-threads", "9", "--hosts", "a,b"], "72 flows"),
])
def test_combinations_the_bench_refuses_exit_2(capsys, tmp_path, argv, named):
    """Written once, in jostle-bench: asked of it (--validate, or --validate-options for
    other hosts) before anything is planned on disk."""
    rc, _, err = cli(capsys, "contention", *argv, "--output-dir", str(tmp_path), "--launcher", "",
                     "--dry-run")
    assert rc == 2, err
    assert named in err and not any(tmp_path.iterdir())


def test_dry_run_prints_every_command_line(capsys, fake, tmp_path):
    rc, out, _ = cli(capsys, "contention", "fig1", "--quick", "--max-cores", "1", "--launcher",
                     "mpirun -np 2", "--output-dir", str(tmp_path), "--dry-run", "--runs", "1")
    lines = out.strip().splitlines()
    assert rc == 0 and len(lines) == 2 and not (tmp_path / "contention").exists()
    assert lines[1].startswith(f"mpirun -np 2 {fake} contention --kernel triad --compute-cores 1 ")
    assert lines[1].endswith(f"--output {tmp_path}/contention/fig1-triad-c01-quick.jsonl --progress --quiet")


@pytest.mark.pages
def test_campaign_draws_resumes_and_estimates(capsys, fake, tmp_path):
    argv = ["contention", "fig1", "--quick", "--max-cores", "2", "--launcher", "",
            "--output-dir", str(tmp_path), "--quiet"]
    rc, out, err = cli(capsys, *argv)
    assert rc == 0, err
    d = tmp_path / "contention"
    assert out.split()[-2:] == [str(d / "figures" / f"contention-fig1-quick.{x}")
                                for x in ("png", "svg")]
    # three launches a run by default, summed up per point as `jostle pingpong` does
    assert "fig1-triad-c02-quick: 3 launches, the launch as the unit" in out
    assert re.search(r"^\s+together 4\s+1\.2\s", out, re.M)   # latency at 4 B, 2 cores, together
    assert sorted(p.name for p in d.glob("*.summary.json")) == [
        f"fig1-triad-c0{n}-quick.summary.json" for n in range(3)]
    assert load_run(d / "fig1-triad-c02-quick-r3.jsonl").meta["argv"][1:4] == ["contention", "--kernel", "triad"]
    assert re.search(r"fig1 without --quick would be \d+ runs here, about \d", err) and "5 ×" in err
    rc, _, err = cli(capsys, *argv)
    assert rc == 0 and err.count("already complete") == 9


def test_jostle_run_has_a_contention_step_after_the_pingpong():
    names = [s.name for s in run_cmd.steps()]
    assert names.index("pingpong") < names.index("contention") < names.index("report")


def test_jostle_run_step_is_skipped_by_a_bench_without_contention(capsys, fake_bench, tmp_path):
    rc, _, err = cli(capsys, "run", "--steps", "contention", "--launcher", "",
                     "--output-dir", str(tmp_path))
    assert rc == 0 and "has no contention benchmark: step skipped" in err


@pytest.mark.pages
def test_jostle_run_step_runs_fig1_quick(capsys, fake, tmp_path):
    rc, _, err = cli(capsys, "run", "--steps", "contention,report", "--launcher", "",
                     "--output-dir", str(tmp_path), "--campaign", "r")
    assert rc == 0, err
    names = sorted(p.name for p in (tmp_path / "r").glob("fig1-*.jsonl"))
    assert names == ["fig1-triad-c00-quick.jsonl", "fig1-triad-c01-quick.jsonl"]  # 1 free core of 2
    assert (tmp_path / "r" / "figures" / "contention-fig1-quick.png").exists()
    assert '<section id="contention">' in (tmp_path / "r" / "report.html").read_text()


@pytest.mark.slow
@pytest.mark.mpi
def test_real_fig1_quick(capsys, tmp_path, monkeypatch, built):
    """Against the real jostle-bench (Open MPI), 0 and 1 compute cores per rank."""
    bench = built()
    monkeypatch.delenv("JOSTLE_BENCH", raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    # fig1's sizes (4 B, 64 MiB) with the shortest phases and fewest samples: the assertions
    # are about what is recorded and drawn, not about the values
    rc, out, err = cli(capsys, "contention", "fig1", "--quick", "--max-cores", "1", "--mpi", "openmpi",
                       "--phase-time", "0.05", "--min-reps", "5", "--max-time", "0.1",
                       "--array-bytes", "8M", "--runs", "1",
                       "--bench", str(bench), "--output-dir", str(tmp_path), "--quiet", "--timeout", "120")
    assert rc == 0, err
    d = tmp_path / "contention"
    assert (d / "figures" / "contention-fig1-quick.png").stat().st_size > 10_000
    run = load_run(d / "fig1-triad-c01-quick.jsonl")
    df = run.points
    assert set(df.phase) == {"compute", "comm", "together"} and set(df["size"]) == {4, M64}
    assert set(df.compute_cores) == {1}
    from jostle.analysis.contention import pairs
    p = pairs(df, run.param_names)
    assert {"latency", "bandwidth", "compute_bandwidth"} <= set(p.metric)
    assert (p.alone > 0).all() and (p.together > 0).all()
    assert "fig1 without --quick would be" in err   # sized to this machine
