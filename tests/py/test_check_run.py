"""How `jostle check` runs on its node, without a launch (docs/check.md): what --slurm does
with a verdict and the suspect mark, the busy rule and the load meter, the NICs, the spool's
records, the plan within the budget, and the watchdog on plain processes (test_check.py: the
site file, references, verdicts and bad input)."""

import json
import subprocess
import time
from pathlib import Path

import pytest

from jostle.analysis import check, check_site
from jostle.errors import UsageError
from jostle.run import check_node, slurm
from jostle.run.watchdog import Expired, Watchdog, session_members
from jostle.studies import check as check_study

pytestmark = pytest.mark.unit


# ---------------------------------------------------------------- the scheduler

@pytest.mark.parametrize("status, suspect, drained, ours, action", [
    (check.UNHEALTHY, False, False, False, "suspect"),    # first failure: a retest first
    (check.UNHEALTHY, True, False, False, "drain"),       # failed again: drained
    (check.TIMEOUT, True, False, False, "drain"),         # a hang counts as a failure
    (check.UNHEALTHY, True, True, False, "none"),         # an operator's drain is left alone
    (check.UNHEALTHY, False, True, True, "none"),         # already drained by jostle
    (check.HEALTHY, False, True, True, "resume"),         # jostle's drain: resumed
    (check.HEALTHY, True, False, False, "clear"),         # a pass clears the suspect mark
    (check.HEALTHY, False, True, False, "clear"),         # an operator's drain: never resumed
    (check.SKIPPED, True, True, True, "none"),            # could not judge: nothing changes
])
def test_what_slurm_does_with_a_verdict(status, suspect, drained, ours, action):
    assert check.slurm_action(status, suspect, drained, ours)[0] == action


def test_without_suspect_mode_the_first_failure_drains():
    assert check.slurm_action(check.UNHEALTHY, False, False, False, use_suspect=False)[0] == "drain"


def test_scontrol_node_line_parsed():
    line = ("NodeName=n2 Arch=x86_64 State=IDLE+DRAIN ThreadsPerCore=1 ExtSensorsTemp=n/s "
            "Reason=jostle: triad 1.2 GB/s vs 4.3 GB/s (-72%, tolerance 18%) [root@2026-11-28T00:37:08]\n")
    n = slurm.parse_node(line)
    assert (n.state, n.drained, n.ours) == ("IDLE+DRAIN", True, True)
    assert n.reason == "jostle: triad 1.2 GB/s vs 4.3 GB/s (-72%, tolerance 18%)"
    n = slurm.parse_node("NodeName=n1 State=MIXED+DRAIN Reason=operator: fan x=1 [slurm@2026]")
    assert (n.drained, n.ours, n.reason) == (True, False, "operator: fan x=1")
    assert not slurm.parse_node("NodeName=n1 State=IDLE Weight=1").drained


def test_suspect_mark_kept_and_cleared(tmp_path):
    d = tmp_path / "state"
    assert check_node.read_suspect(d, "n1") is None
    check_node.mark_suspect(d, "n1", "jostle: triad …")
    assert check_node.read_suspect(d, "n1")["reason"] == "jostle: triad …"
    check_node.clear_suspect(d, "n1")
    check_node.clear_suspect(d, "n1")
    assert check_node.read_suspect(d, "n1") is None and not list(d.iterdir())


# ---------------------------------------------------------------- busy, NICs, spool

def test_busy_rules():
    quiet = check_node.Load(1.0, 8, 0.1, 0.0, {})
    assert check_node.why_busy(quiet, 0.25, 0.1, True) == ""
    full = check_node.Load(1.0, 8, 7.9, 8.0, {})
    assert "others used 7.90 of its 8 cores" in check_node.why_busy(full, 0.25, 0.1, True)
    queued = check_node.Load(1.0, 8, 1.0, 9.0, {})
    assert check_node.why_busy(queued, 0.25, 0.1, True) == "9 tasks runnable on its 8 cores"
    assert check_node.why_busy(queued, 0.25, 0.1, False) == ""   # runnable: before only
    user = check_node.Load(1.0, 128, 0.5, 0.0, {1001: 0.5})
    assert check_node.why_busy(user, 0.25, 0.1, True) == \
        "other users' processes on its cores (uid 1001: 0.50 cores)"


def test_load_meter_sees_a_spinning_process():
    m = check_node.LoadMeter()
    m.start()
    p = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        time.sleep(0.6)
        load = m.stop()
    finally:
        p.kill()
        p.wait()
    assert load.others_cores > 0.3, load


def test_nics_from_sysfs(tmp_path):
    net = tmp_path / "class" / "net"
    for name, state, speed, dev in (("eth0", "up", "25000", True), ("lo", "unknown", "", False),
                                    ("eth1", "down", "-1", True)):
        d = net / name
        d.mkdir(parents=True)
        (d / "operstate").write_text(state + "\n")
        if speed:
            (d / "speed").write_text(speed + "\n")
        if dev:
            (d / "device").mkdir()
    port = tmp_path / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    port.mkdir(parents=True)
    (port / "state").write_text("4: ACTIVE\n")
    (port / "rate").write_text("100 Gb/sec (4X EDR)\n")
    assert check_node.nics(tmp_path) == {
        "eth0": {"state": "up", "speed_mbps": 25000}, "eth1": {"state": "down"},
        "mlx5_0/1": {"state": "up", "speed_mbps": 100000}}


def test_spool_record_is_written_whole(tmp_path):
    rec = {"type": "check", "node": "n/1", "time": "2026-11-28T00:00:01.250Z", "values": []}
    path = check_node.spool_write(tmp_path / "spool", rec)
    assert path.name.startswith("check-n_1-20261128T000001250Z-") and path.suffix == ".json"
    assert json.loads(path.read_text()) == rec
    assert [p.name for p in path.parent.iterdir()] == [path.name]


# ---------------------------------------------------------------- the plan

def test_the_plan_fits_the_budget_and_is_the_scans_fingerprint():
    runs = check_study.plan(list(check.CHECKS), 15.0, "cn1", check.RunOptions(1, True, "4,1M"))
    # the ping-pong twice, judged by its better launch
    assert [r.name for r in runs] == ["fp-pingpong-cn1", "fp-pingpong-cn1-again", "fp-memlat-cn1",
                                      "fp-contention-cn1"]
    # each step is stopped at the end of its share, and the shares fill the budget
    assert sum(r.timeout for r in runs) + check.FIXED_S == pytest.approx(15.0)
    # the working sets are built in a share of the step's, and the reference's are used
    for r in runs[2:]:
        setup = float(r.args[r.args.index("--setup-time") + 1])
        assert 0 < setup < r.timeout - check.PER_LAUNCH_S
    sized = check_study.plan(["triad", "memory_latency"], 15.0, "x",
                       check.RunOptions(1, True, "4,1M", chain_bytes=1 << 26, array_bytes=1 << 27))
    assert sized[0].args[-2:] == ["--bytes", str(1 << 26)]
    assert sized[1].args[-2:] == ["--array-bytes", str(1 << 27)]
    assert "--oversubscribe" in runs[3].args and runs[2].ranks == 1
    # the chain on the class's pages: huge, or the system's for a class saved before
    assert runs[2].args[runs[2].args.index("--pages") + 1] == "huge"
    old = check_study.plan(["memory_latency"], 15.0, "x", check.RunOptions(chain_pages="system"))
    assert old[0].args[old[0].args.index("--pages") + 1] == "system"
    assert [r.benchmark for r in check_study.plan(["triad"], 5.0, "x")] == ["contention"]
    assert check_study.plan([check.NIC], 1.0, "x") == []
    with pytest.raises(UsageError, match=r"--budget 5 is too short for pingpong, memlat, "
                       r"contention: it needs 5.7 s at least"):
        check_study.plan(list(check.CHECKS), 5.0, "x")


def test_a_class_whose_launches_are_slow_is_planned_with_its_own_launch_cost():
    """A node whose mpirun takes 2 s (PMIx, a large topology): its reference measured it, and
    each step's share holds it, the budget still filled; less than the floor is the floor."""
    opts = check.RunOptions(1, True, "4,1M")
    fast, slow = (check_study.plan(list(check.CHECKS), 15.0, "n", opts, launch_s=x) for x in (0.1, 2.0))
    assert [r.timeout for r in fast] == [r.timeout for r in check_study.plan(list(check.CHECKS),
                                                                       15.0, "n", opts)]
    assert sum(r.timeout for r in slow) + check.FIXED_S == pytest.approx(15.0)
    # each launch has its 2 s and the points less time
    for f, s in zip(fast, slow):
        assert s.timeout - 2.0 < f.timeout - check.PER_LAUNCH_S
    with pytest.raises(UsageError, match=r"--budget 9 is too short for pingpong, memlat, "
                       r"contention: it needs 10.5 s at least .*4 launches of 2 s, as its "
                       r"reference measured them"):
        check_study.plan(list(check.CHECKS), 9.0, "x", launch_s=2.0)


def test_a_reference_records_its_launch_cost(tmp_path):
    site = tmp_path / "site.toml"
    site.write_text('[class.a]\nhosts = ["n*"]\n[class.a.step_seconds]\nlaunch = 1.7\n')
    assert check_site.load(site).classes["a"].step_seconds == {"launch": 1.7}


# ---------------------------------------------------------------- the watchdog

def test_the_watchdog_kills_the_whole_session_and_says_what_ran():
    wd = Watchdog(2.5, reserve=1.0)
    t0 = time.monotonic()
    with pytest.raises(Expired) as e:
        # a child that would outlive its parent's kill, in a process group of its own
        wd.run(["sh", "-c", "setsid sleep 60.3131 & sleep 60.3132"], "the hang")
    wd.finish()
    assert e.value.what == "the hang" and time.monotonic() - t0 < 5
    time.sleep(0.2)
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit()
            and b"60.313" in _cmdline(p)]
    assert not left, "left running: " + ", ".join(_cmdline(p).decode() for p in left)


def _cmdline(p):
    try:
        return (p / "cmdline").read_bytes()
    except OSError:
        return b""


def test_a_run_within_time_returns_its_output_and_leaves_nothing():
    wd = Watchdog(30)
    r = wd.run(["sh", "-c", "echo out; echo err >&2; exit 3"], "x")
    wd.finish()
    assert (r.status, r.returncode, r.stdout, r.stderr) == ("failed", 3, "out\n", "err\n")
    wd = Watchdog(30)
    r = wd.run(["sleep", "5"], "y", timeout=0.3)
    wd.finish()
    assert r.status == "timeout"


def test_session_members_of_a_dead_session_is_empty():
    p = subprocess.Popen(["true"], start_new_session=True)
    p.wait()
    assert session_members(p.pid) == []
