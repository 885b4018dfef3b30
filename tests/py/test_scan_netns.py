"""`jostle scan` over five "hosts" (network namespaces on a bridge, tests/py/netns4.py), one scan
with three faults at once: a degraded link (tbf on a host's veth), a slow node (its processes in
a cgroup of 30% of a core) and a host killed mid-scan. The first two are named by their
evidence, the killed one named unreachable, and the two healthy hosts flag nothing (the scan's
false alarms judged in the same run). One scan of five hosts costs the scan of four with the
two faults (about 50 s here) and the killed host's --timeout, where two scans took 89 s; the
links are measured among the four left, as before. Skipped unless root with Open MPI, tc
and namespaces."""

import json
import tempfile
import time
from pathlib import Path

import pytest

import netns4

REASON = netns4.unavailable(5)
# The "hosts" are the same two vCPUs at several moments, and the hypervisor moves them between
# moments: a healthy host's 8-byte intra-node latency came out 1.6 to 2.0 times the others' in
# both passes, twice in CI (2026-11-28: effects 0.6-0.7, then 0.99 and 0.50). The faults here are
# effects of 2.9 (memory latency), 6 (triad) and 13 (the capped link): a bar of 2.0 keeps them and
# leaves the hypervisor out. The clean-scan rate at the default 0.5 is bench/scan_targets.py's,
# on a quiet machine (0 of 10, docs/validation.md).
MIN_EFFECT = 2.0
pytestmark = [pytest.mark.system, pytest.mark.skipif(bool(REASON), reason=REASON or "ok")]


@pytest.fixture
def tmp_path():
    """A directory of this test's own: pytest's basetemp is shared by every session of this
    user, and another session's clean-up removes it while a scan of minutes writes there."""
    with tempfile.TemporaryDirectory(prefix="jostle-scan-test-") as d:
        yield Path(d)


def test_a_degraded_link_a_slow_node_and_a_killed_host_are_each_named(tmp_path):
    with netns4.Hosts(5) as hosts:
        doc, proc = _scan_with_faults(hosts, tmp_path)
        healthy, bad_link, slow, _, victim = hosts.ips
        assert proc.returncode == 1
        named = {s["node"]: s for s in doc["suspects"]}
        # the three faults, each for what it is, and nothing else (the healthy hosts' verdict)
        assert set(named) == {bad_link, slow, victim}, json.dumps(doc["suspects"], indent=1)
        assert doc["unreachable"] == [victim] and named[victim]["kind"] == "unreachable"
        assert any(e["metric"] == "links_out_bandwidth" for e in named[bad_link]["evidence"])
        # the slow node by its fingerprint, its triad (compute over the phase's wall time) less
        # than half the others'. Which of its metrics pass the threshold varies: with four
        # nodes on two loaded cores, a healthy node's triad halved by the load widens the MAD
        # of four values enough that the slow node's z (9 in one run) may fall under 3.5.
        fingerprint = {"pingpong_latency", "pingpong_bandwidth", "memory_latency", "triad",
                       "latency_alone", "latency_under_load", "bandwidth_under_load"}
        assert {e["metric"] for e in named[slow]["evidence"]} & fingerprint
        assert all(e["run"] for s in doc["suspects"] if s["node"] != victim
                   for e in s["evidence"])
        alive = [n for n in doc["nodes"] if n["status"] == "ok"]
        assert [n["host"] for n in alive] == hosts.ips[:4]
        assert all(n["pingpong_latency"] and n["triad"] for n in alive)
        triad = {n["host"]: n["triad"] for n in alive}
        others = sorted(v for h, v in triad.items() if h != slow)
        assert triad[slow] < others[1] / 2, triad
        assert len(doc["links"]) == 12          # the four alive, every way
        # ranks and a compute thread each on 2 cores: oversubscribed, so the ratios under load
        # (a rank waiting out a time slice moved the 4-byte latency 30x in CI) are not judged,
        # and the scan says so
        assert any("not judged" in n and "oversubscribed" in n for n in doc["notes"]), doc["notes"]
        drain = (tmp_path / "drain.sh").read_text()
        for ip in (bad_link, slow):
            assert f"NodeName={ip} State=DRAIN" in drain, drain
        assert f"NodeName={healthy} " not in drain, drain
        assert any(p.endswith("-bandwidth.png") for p in doc["figures"])
        assert (tmp_path / "faults" / f"fp-pingpong-{victim}.jsonl.partial").exists() or \
            (tmp_path / "faults" / f"fp-pingpong-{victim}.launch.json").exists()


def _scan_with_faults(hosts, tmp_path):
    """The scan's JSON and process: host 2's link capped, host 3 slowed, the last host killed
    once the first host's ping-pong is measured."""
    bad_link, slow, victim = hosts.ips[1], hosts.ips[2], hosts.ips[4]
    proc = None
    try:
        # 200 Mbit/s is 1/30 of a healthy veth here, 30% of a core a quarter of a healthy
        # node's triad: both far past --min-effect, at a third of the time that 20 Mbit/s and
        # 10% took (the slow node's runs and the link run are measured twice)
        hosts.script("degrade", bad_link, "200mbit")
        hosts.script("slow", slow, "30000")
        # the killed host's run waits out --timeout (a dead host does not answer, as over
        # ssh), the slowed host's runs end 2-3 s past their time (5.8 s for a 3.5 s plan),
        # and past 15 s beside a load of 6 (it was then named unreachable, not slow)
        proc = hosts.scan(tmp_path, "faults", "--drain-script", str(tmp_path / "drain.sh"),
                          "--timeout", "20", min_effect=MIN_EFFECT, background=True)
        first = tmp_path / "faults" / f"fp-pingpong-{hosts.ips[0]}.jsonl"
        deadline = time.monotonic() + 120
        while not first.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        hosts.script("kill", victim)      # mid-scan: the first node is done, the victim not yet
        out, err = proc.communicate(timeout=600)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
        hosts.heal()
    assert proc.returncode in (0, 1), err[-3000:]
    return json.loads(out), proc
