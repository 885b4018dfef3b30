import io
import json
import os
import re
import signal
import threading
import time

import pytest

from jostle.run.campaign import Campaign, LaunchConfig, RunSpec
from jostle.errors import Interrupted, JostleError, UsageError
from jostle.run.progress import Progress
from jostle.records.results import load_run

pytestmark = pytest.mark.unit


def config(bench):
    return LaunchConfig(bench, "custom", prefix="")  # the fake needs no MPI launcher


def quiet_progress(tmp_path):
    return Progress(stream=open(tmp_path / "progress.log", "w"), live=False)


def test_runs_write_results_sidecar_and_manifest(tmp_path, fake_bench, capsys):
    camp = Campaign(tmp_path / "c", [RunSpec("a", "pingpong", ["--sizes", "0:64"], timeout=60)])
    assert camp.run(config(fake_bench), quiet_progress(tmp_path)) == [(camp.runs[0], "ok")]
    run = load_run(tmp_path / "c" / "a.jsonl")
    assert sorted(run.points["size"].unique()) == [0, 1, 2, 4, 8, 16, 32, 64]
    side = json.loads((tmp_path / "c" / "a.launch.json").read_text())
    assert side["status"] == "ok" and side["launcher"] == "custom" and "--progress" in side["argv"]
    assert run.launch["command"] == side["command"]
    assert json.loads((tmp_path / "c" / "campaign.json").read_text())["runs"][0]["name"] == "a"
    out = capsys.readouterr().out
    assert "# Size" in out and "\n64 " in out  # the child's table streamed to stdout
    log = (tmp_path / "progress.log").read_text()
    assert "run 1/1 a: ok, 8/8 points" in log


def test_complete_runs_are_never_run_again(tmp_path, fake_bench):
    specs = [RunSpec("a", "pingpong", ["--sizes", "0:4"]), RunSpec("b", "pingpong", ["--sizes", "8"])]
    camp = Campaign(tmp_path, specs)
    camp.run(config(fake_bench), quiet_progress(tmp_path), quiet=True)
    before = (tmp_path / "a.jsonl").stat().st_mtime_ns
    (tmp_path / "b.jsonl").unlink()
    result = camp.run(config(fake_bench), quiet_progress(tmp_path), quiet=True)
    assert [s for _, s in result] == ["skipped", "ok"]
    assert (tmp_path / "a.jsonl").stat().st_mtime_ns == before


def test_a_run_made_with_other_options_is_refused_not_reused(tmp_path, fake_bench):
    Campaign(tmp_path, [RunSpec("a", "pingpong", ["--sizes", "0:4"])]).run(
        config(fake_bench), quiet_progress(tmp_path), quiet=True)
    again = Campaign(tmp_path, [RunSpec("a", "pingpong", ["--sizes", "0:8"])])
    with pytest.raises(UsageError, match="made with other options.*--sizes 0:4.*--sizes 0:8"):
        again.run(config(fake_bench), quiet_progress(tmp_path), quiet=True)
    more = Campaign(tmp_path, [RunSpec("a", "pingpong", ["--sizes", "0:4"], ranks=4)])
    with pytest.raises(UsageError, match="2 ranks.*4 ranks"):
        more.run(config(fake_bench), quiet_progress(tmp_path), quiet=True)
    # refused before anything is measured, not after the runs planned before it
    later = Campaign(tmp_path, [RunSpec("new", "pingpong", ["--sizes", "4"]), again.runs[0]])
    with pytest.raises(UsageError, match="made with other options"):
        later.run(config(fake_bench), quiet_progress(tmp_path), quiet=True)
    assert not list(tmp_path.glob("new.*"))


def test_each_run_may_have_its_own_launcher(tmp_path, fake_bench):
    specs = [RunSpec("a", "pingpong", ["--sizes", "4"]), RunSpec("b", "pingpong", ["--sizes", "8"])]
    seen = []
    Campaign(tmp_path, specs).run(lambda s: seen.append(s.name) or config(fake_bench),
                                  quiet_progress(tmp_path), quiet=True)
    assert seen == ["a", "b"]
    assert "run 2/2 b: ok" in (tmp_path / "progress.log").read_text()


def test_a_corrupt_complete_file_is_not_overwritten(tmp_path, fake_bench, data):
    (tmp_path / "a.jsonl").write_text((data / "noend.jsonl").read_text())
    with pytest.raises(JostleError, match="move it away"):
        Campaign(tmp_path, [RunSpec("a", "pingpong")]).run(config(fake_bench), quiet_progress(tmp_path))


def test_timeout_names_the_partial_file_and_its_points(tmp_path, fake_bench, monkeypatch):
    # The fake measures 2 sizes at once, then hangs: whatever the load, the time-out finds
    # those 6 point lines (a fake that had not started within it would fail the test, so the
    # time-out leaves a busy machine room: `make test` runs the tests side by side).
    monkeypatch.setenv("FAKE_BENCH_HANG_AFTER", "2")
    camp = Campaign(tmp_path, [RunSpec("slow", "pingpong", ["--sizes", "0:1M"], timeout=10)])
    with pytest.raises(JostleError) as e:
        camp.run(config(fake_bench), quiet_progress(tmp_path), quiet=True)
    msg = str(e.value)
    assert "exceeded its time-out of 10 s" in msg
    assert "slow.jsonl.partial (6 point lines)" in msg, msg
    assert json.loads((tmp_path / "slow.launch.json").read_text())["status"] == "timeout"
    # The fake closes its file on SIGTERM as jostle-bench does: an interrupted, loadable partial.
    with pytest.warns(UserWarning):
        run = load_run(tmp_path / "slow.jsonl.partial", allow_incomplete=True)
    assert run.end["status"] == "interrupted" and len(run.points) == 6 < 3 * 22
    assert sorted(run.points["size"].unique()) == [0, 1]


def test_crash_reports_status_and_stderr(tmp_path, fake_bench, monkeypatch):
    monkeypatch.setenv("FAKE_BENCH_EXIT", "3")
    with pytest.raises(JostleError) as e:
        Campaign(tmp_path, [RunSpec("x", "pingpong")]).run(config(fake_bench), quiet_progress(tmp_path))
    assert "exit status 3" in str(e.value) and "cannot bind" in str(e.value)
    assert "x.jsonl.partial (0 point lines)" in str(e.value)


def test_bench_rejecting_its_arguments_is_a_usage_error(tmp_path, fake_bench):
    with pytest.raises(UsageError, match="unknown arguments"):
        Campaign(tmp_path, [RunSpec("x", "nosuchbench")]).run(config(fake_bench), quiet_progress(tmp_path))


def test_interrupted_run_says_how_to_resume(tmp_path, fake_bench, monkeypatch):
    from jostle.run import process

    def fake_execute(argv, **kw):
        raise process.RunInterrupted(process.Outcome("interrupted", -2, 0.1))
    monkeypatch.setattr(process, "execute", fake_execute)
    with pytest.raises(Interrupted) as e:
        Campaign(tmp_path, [RunSpec("x", "pingpong")]).run(config(fake_bench), quiet_progress(tmp_path))
    assert e.value.exit_status == 130 and "x.jsonl.partial" in str(e.value) and "resume" in str(e.value)
    assert json.loads((tmp_path / "x.launch.json").read_text())["status"] == "interrupted"


def test_duplicate_names_and_unwritable_directory(tmp_path):
    with pytest.raises(UsageError, match="appear twice"):
        Campaign(tmp_path, [RunSpec("a", "pingpong"), RunSpec("a", "pingpong")])
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="not writable"):
        Campaign(tmp_path / "file" / "c", []).prepare()


def test_a_log_gets_one_line_per_run_and_the_campaign_total(tmp_path, fake_bench):
    Campaign(tmp_path, [RunSpec("a", "pingpong", ["--sizes", "4"])]).run(
        config(fake_bench), quiet_progress(tmp_path), quiet=True)
    specs = [RunSpec(n, "pingpong", ["--sizes", s]) for n, s in (("a", "4"), ("b", "0:8"), ("c", "8"))]
    Campaign(tmp_path, specs).run(config(fake_bench), quiet_progress(tmp_path), quiet=True)
    lines = (tmp_path / "progress.log").read_text().splitlines()
    assert "\r" not in "".join(lines) and "\x1b" not in "".join(lines) and len(lines) == 3
    assert lines[0].startswith("jostle: run 1/3 a: already complete")
    # the run already complete counts as done; the estimate comes from the runs measured
    assert re.fullmatch(r"jostle: run 2/3 b: ok, 5/5 points, [0-9.]+ s \(2/3 runs in "
                        r"0:00:\d\d(, about 0:\d\d:\d\d left)?\): latency .* µs at \d+ B, .*",
                        lines[1]), lines[1]
    assert re.fullmatch(r"jostle: run 3/3 c: ok, 1/1 points, .* \(3/3 runs in [0-9:]+\): .*",
                        lines[2]), lines[2]


def test_on_a_terminal_the_bars_show_runs_and_points_and_output_lands_above(capsys):
    buf = io.StringIO()
    p = Progress(stream=buf, live=True)
    with p.campaign(5, done=1):
        run = p.start(2, 5, "intra")
        p.update(run, 5, 10)
        p.echo("a child message", err=True)
        p.echo("a table line")
        deadline = time.monotonic() + 10   # rich redraws 10 times a second, in its own thread
        while "5/10 points" not in buf.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
        drawn = buf.getvalue()
        p.finish(run, "ok")
    assert capsys.readouterr().out == "a table line\n"   # stdout is not the terminal here
    assert re.search(r"run 2/5 intra .*5/10 points", drawn) and re.search(r"campaign .*1/5 runs", drawn)
    assert drawn.index("a child message") < drawn.rindex("5/10 points")
    assert "jostle: run 2/5 intra: ok, 5/10 points" in buf.getvalue()


def _barrier_prefix(tmp_path, n):
    """A launcher prefix that lets a run start only once N runs have reached it (or fails it
    after 20 s): runs that do not run side by side fail."""
    gate = tmp_path / "gate"
    gate.mkdir()
    script = tmp_path / "barrier.sh"
    script.write_text(f'touch {gate}/$$\nfor i in $(seq 200); do\n'
                      f'  [ $(ls {gate} | wc -l) -ge {n} ] && exec "$@"\n  sleep 0.1\ndone\n'
                      'echo "barrier: alone" >&2; exit 1\n')
    return f"sh {script}"


def test_side_by_side_runs_start_together_and_write_what_one_at_a_time_writes(tmp_path, fake_bench):
    specs = [RunSpec(n, "pingpong", ["--sizes", s], timeout=60)
             for n, s in (("a", "0:8"), ("b", "4"), ("c", "16:64"))]
    cfg = LaunchConfig(fake_bench, "custom", prefix=_barrier_prefix(tmp_path, 3))
    done = Campaign(tmp_path / "p", specs).run(cfg, quiet_progress(tmp_path), quiet=True, jobs=3)
    assert [status for _, status in done] == ["ok", "ok", "ok"]
    Campaign(tmp_path / "s", specs).run(config(fake_bench), quiet_progress(tmp_path), quiet=True)
    for n in "abc":
        par, seq = load_run(tmp_path / "p" / f"{n}.jsonl"), load_run(tmp_path / "s" / f"{n}.jsonl")
        assert list(par.points["size"]) == list(seq.points["size"])
    log = (tmp_path / "progress.log").read_text()
    assert all(f"run {k}/3 {n}: ok" in log for k, n in ((1, "a"), (2, "b"), (3, "c")))


def test_side_by_side_a_failure_starts_no_other_run(tmp_path, fake_bench, monkeypatch):
    monkeypatch.setenv("FAKE_BENCH_EXIT", "3")
    specs = [RunSpec(n, "pingpong", timeout=60) for n in "abcd"]
    with pytest.raises(JostleError, match="exit status 3"):
        Campaign(tmp_path, specs).run(config(fake_bench), quiet_progress(tmp_path), jobs=2)
    started = [n for n in "abcd" if (tmp_path / f"{n}.launch.json").exists()]
    assert len(started) < 4 and all((tmp_path / f"{n}.jsonl.partial").exists() for n in started)


def test_side_by_side_ctrl_c_stops_every_run_and_seals_its_file(tmp_path, fake_bench, monkeypatch,
                                                                python_sigint):
    monkeypatch.setenv("FAKE_BENCH_DELAY", "0.2")
    specs = [RunSpec(n, "pingpong", ["--sizes", "0:1M"], timeout=60) for n in "ab"]
    cfg = LaunchConfig(fake_bench, "custom", prefix=_barrier_prefix(tmp_path, 2))
    # Ctrl-C once both runs have measured a point (not after a fixed time: on a busy machine
    # the fakes may not have started by then).
    partials, stop = [tmp_path / f"{n}.jsonl.partial" for n in "ab"], threading.Event()

    def ctrl_c_once_both_measure():
        end = time.monotonic() + 60
        while not stop.is_set() and time.monotonic() < end:
            if all(p.exists() and '"type":"point"' in p.read_text() for p in partials):
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.05)
    threading.Thread(target=ctrl_c_once_both_measure, daemon=True).start()
    try:
        with pytest.raises(Interrupted) as e:
            Campaign(tmp_path, specs).run(cfg, quiet_progress(tmp_path), quiet=True, jobs=2)
    finally:
        stop.set()
    assert e.value.exit_status == 130 and "resume" in str(e.value)
    for n in "ab":
        assert json.loads((tmp_path / f"{n}.launch.json").read_text())["status"] == "interrupted"
        with pytest.warns(UserWarning):
            run = load_run(tmp_path / f"{n}.jsonl.partial", allow_incomplete=True)
        assert run.end["status"] == "interrupted" and 0 < len(run.points) < 3 * 22
