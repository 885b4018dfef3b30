"""A rerun after an interruption keeps what was measured: real ranks, a 600-point ping-pong
stopped by Ctrl-C, then the same command again (python/jostle/records/resume.py, docs/records.md)."""

import json
import os
import signal
import subprocess
import sys

import pytest

from jostle.records.results import load_run
from jostle.records.sidecar import launcher_state

from mpijobs import ENV
from test_bench_ranks import at_a_terminal, last_line_once_ended, tree, wait_for_points

pytestmark = pytest.mark.mpi

REPS = 40     # samples of every point, exactly: a launch's samples are counted below
POINTS = 600


def sweep(tmp_path, *more):
    """POINTS points of exactly REPS round trips; cold buffers (64 MiB and more set before
    each size) and 2 000 untimed round trips make each point take milliseconds even on a quiet
    machine (a quiet 2-core VM: 7.4 ms a point), time enough to stop it in the middle: Open
    MPI's mpirun takes up to 2 s to bring a Ctrl-C to the ranks, and a sweep of 0.8 s had
    ended by then. Stopped after 50 points, it had measured 222-271 (2026-11-29, 5 runs):
    more points only made the rerun measure more (1 000: 9 s more of CPU)."""
    return [sys.executable, "-m", "jostle.cli", "pingpong", "--mpi", "openmpi", "--sizes",
            f"1:{POINTS}:1", "--min-reps", str(REPS), "--max-reps", str(REPS), "--warmup", "2000",
            "--buffers", "cold", "--runs", "1",
            "--output-dir", str(tmp_path), "--name", "r", *more]


def groups(lines):
    """The points (runs of lines of the same params) of point lines."""
    out = []
    for line in lines:
        p = json.loads(line)["params"]
        if not out or out[-1] != p:
            out.append(p)
    return out


def test_an_interrupted_sweep_resumes_from_its_last_point(tmp_path):
    proc = subprocess.Popen(sweep(tmp_path), env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=at_a_terminal)
    partial = tmp_path / "adhoc" / "r.jsonl.partial"
    try:
        wait_for_points(partial, 3 * 50, poll=0.01)
        os.killpg(proc.pid, signal.SIGINT)          # Ctrl-C at jostle's terminal
        _, err = proc.communicate(timeout=60)
    finally:
        for pid in tree(proc.pid) if proc.poll() is None else ():
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    end = json.loads(last_line_once_ended(partial))
    # the signal jostle received (Ctrl-C) beside the one the ranks got from the launcher
    assert end["status"] == "interrupted" and end["jostle_signal"] == signal.SIGINT, end
    assert isinstance(end["signal"], int)
    side = json.loads((tmp_path / "adhoc" / "r.launch.json").read_text())
    assert side["status"] == "interrupted" and launcher_state(side) == "interrupted"
    before = partial.read_bytes()
    kept = [x for x in before.decode().splitlines() if '"type":"point"' in x]
    k = len(groups(kept))
    assert 50 <= k < POINTS, k

    r = subprocess.run(sweep(tmp_path), env=ENV, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert f"resumed: {k} point(s)" in r.stderr
    final = tmp_path / "adhoc" / "r.jsonl"
    data = final.read_bytes()
    first_point = before.index(b"\n") + 1
    # the kept points byte for byte, right after the meta line
    body = data[data.index(b"\n") + 1:]
    assert body.startswith(before[first_point:first_point + len("\n".join(kept)) + 1])
    assert not partial.exists() and not list((tmp_path / "adhoc").glob("*.rest*"))
    run = load_run(final)
    lines = data.decode().splitlines()
    points = [x for x in lines if '"type":"point"' in x]
    assert len(groups(points)) == POINTS
    assert sorted(p["size"] for p in groups(points)) == list(range(1, POINTS + 1))
    meta = json.loads(lines[0])
    assert meta["argv"] == json.loads(before.splitlines()[0])["argv"]   # the first run's
    (res,) = meta["resumed"]
    assert res["from_point"] == k and res["kept_lines"] == len(kept)
    assert res["meta"]["harness"]["skip_points"] == k
    # each launch measured its own points only: the samples of the second are the rest's
    new = [json.loads(x) for x in points[len(kept):]]
    assert sum(p["n"] for p in new if p["metric"] == "rtt") == (POINTS - k) * REPS
    assert sum(json.loads(x)["n"] for x in kept if '"rtt"' in x) == k * REPS
    assert json.loads(lines[-1])["points"] == len(points) == len(run.points)


def test_restart_measures_every_point_again(tmp_path, jostle_cli):
    """--restart: an interrupted run is measured from its first point (its .partial replaced).
    (jostle in this process: no signal is sent here.)"""
    d = tmp_path / "adhoc"
    d.mkdir()
    env = {k: ENV[k] for k in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM",
                               "OMPI_MCA_rmaps_base_oversubscribe")}

    def jostle(*more):
        return jostle_cli(*sweep(tmp_path, "--sizes", "1:4:1", *more)[3:], env=env)
    fake = jostle("--dry-run")
    assert fake.returncode == 0, fake.stderr
    r = jostle()
    assert r.returncode == 0, r.stderr
    done = d / "r.jsonl"
    # make it an interrupted run of two points, then rerun with --restart
    lines = done.read_text().splitlines()
    (d / "r.jsonl.partial").write_text("\n".join(lines[:7]) + "\n")
    done.unlink()
    r = jostle("--restart")
    assert r.returncode == 0, r.stderr
    assert "resumed" not in r.stderr
    meta = json.loads(done.read_text().splitlines()[0])
    assert "resumed" not in meta and meta["harness"]["skip_points"] == 0


@pytest.mark.unit
@pytest.mark.parametrize("alive", [True, False])
def test_launch_json_tells_a_gone_launcher_from_a_running_one(alive):
    import socket
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    if not alive:
        p.kill()
        p.wait()
    try:
        state = launcher_state({"status": "running", "pid": p.pid, "host": socket.gethostname()})
    finally:
        p.kill()
        p.wait()
    assert state == "running" if alive else state.startswith("gone"), state


def test_a_trailing_option_without_value_does_not_take_the_next_one(tmp_path, built):
    """`--sizes --output F`: --sizes is named as having no value (it took --output before, and
    the error blamed the output path); judged before MPI starts."""
    r = subprocess.run([built("openmpi"), "pingpong", "--sizes", "--output",
                        str(tmp_path / "r.jsonl")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "--sizes needs a value" in r.stderr and "'--output'" in r.stderr, r.stderr
    assert not list(tmp_path.iterdir())
