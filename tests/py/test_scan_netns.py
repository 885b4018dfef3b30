"""`jostle scan` over four "hosts" (network namespaces on a bridge, tests/py/netns4.py): a degraded
link (tbf on a host's veth) and a slow node (its processes in a cgroup of 30% of a core) are
named, and a host killed mid-scan is named unreachable while the others, healthy, are reported
and flag nothing (the clean scan: it was a scan of its own, a minute that told nothing the
killed host's scan of the three others does not). Each scan takes one to two minutes here;
skipped unless root with Open MPI, tc and namespaces."""

import json
import tempfile
import time
from pathlib import Path

import pytest

import netns4

REASON = netns4.unavailable()
# The four "hosts" are the same two vCPUs at four moments, and the hypervisor moves them between
# moments: a healthy host's 8-byte intra-node latency came out 1.6 to 2.0 times the others' in
# both passes, twice in CI (2026-11-28: effects 0.6-0.7, then 0.99 and 0.50). The faults here are
# effects of 2.9 (memory latency), 6 (triad) and 13 (the capped link): a bar of 2.0 keeps them and
# leaves the hypervisor out. The clean-scan rate at the default 0.5 is bench/scan_targets.py's,
# on a quiet machine (0 of 10, docs/validation.md).
MIN_EFFECT = 2.0
pytestmark = [pytest.mark.system, pytest.mark.skipif(bool(REASON), reason=REASON or "ok")]


@pytest.fixture(scope="module")
def hosts():
    with netns4.Hosts(4) as h:
        yield h


@pytest.fixture
def tmp_path():
    """A directory of this test's own: pytest's basetemp is shared by every session of this
    user, and another session's clean-up removes it while a scan of minutes writes there."""
    with tempfile.TemporaryDirectory(prefix="jostle-scan-test-") as d:
        yield Path(d)


def _doc(proc):
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_degraded_link_and_slow_node_are_named(hosts, tmp_path):
    bad_link, slow = hosts.ips[1], hosts.ips[2]
    try:
        # 200 Mbit/s is 1/30 of a healthy veth here, 30% of a core a quarter of a healthy
        # node's triad: both far past --min-effect, at a third of the time that 20 Mbit/s and
        # 10% took (78 s against 235 s for this scan, 2026-11-26: the slow node's runs and the
        # link run are measured twice, and every 1 MiB round trip crossed the capped link)
        hosts.script("degrade", bad_link, "200mbit")
        hosts.script("slow", slow, "30000")
        proc = hosts.scan(tmp_path, "faults", "--drain-script", str(tmp_path / "drain.sh"),
                          min_effect=MIN_EFFECT)
    finally:
        hosts.heal()
    doc = _doc(proc)
    assert proc.returncode == 1
    named = {s["node"]: s for s in doc["suspects"]}
    assert set(named) == {bad_link, slow}, json.dumps(doc["suspects"], indent=1)
    assert any(e["metric"] == "links_out_bandwidth" for e in named[bad_link]["evidence"])
    # the slow node by its fingerprint, and its triad (compute over the phase's wall time)
    # less than half the others'. Which of its metrics pass the threshold varies: with four
    # nodes on two loaded cores, a healthy node's triad halved by the load widens the MAD of
    # four values enough that the slow node's z (9 in one run) may fall under 3.5.
    fingerprint = {"pingpong_latency", "pingpong_bandwidth", "memory_latency", "triad",
                   "latency_alone", "latency_under_load", "bandwidth_under_load"}
    assert {e["metric"] for e in named[slow]["evidence"]} & fingerprint
    triad = {n["host"]: n["triad"] for n in doc["nodes"]}
    others = sorted(v for h, v in triad.items() if h != slow)
    assert triad[slow] < others[1] / 2, triad
    assert all(e["run"] for s in doc["suspects"] for e in s["evidence"])
    # every node measured and every link (4 x 3 ways), the faulty ones too
    assert [n["host"] for n in doc["nodes"]] == hosts.ips
    assert all(n["status"] == "ok" and n["triad"] for n in doc["nodes"])
    assert len(doc["links"]) == 12 and doc["unreachable"] == []
    drain = (tmp_path / "drain.sh").read_text()
    assert f"NodeName={bad_link} State=DRAIN" in drain and f"NodeName={slow} State=DRAIN" in drain
    assert any(p.endswith("-bandwidth.png") for p in doc["figures"])


def test_killed_host_is_unreachable_and_the_healthy_others_flag_nothing(hosts, tmp_path):
    """The scan's false alarms are judged here too: but for the host killed mid-scan, the
    hosts are healthy (a clean scan of three), and nothing else may be flagged."""
    victim = hosts.ips[3]
    # Three hosts left are judged by the effect alone, at MIN_EFFECT.
    proc = hosts.scan(tmp_path, "killed", "--timeout", "20", min_effect=MIN_EFFECT,
                      background=True)
    try:
        first = tmp_path / "killed" / f"fp-pingpong-{hosts.ips[0]}.jsonl"
        deadline = time.monotonic() + 120
        while not first.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        hosts.script("kill", victim)      # mid-scan: the first node is done, the victim not yet
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
        hosts.heal()
    assert proc.returncode == 1, err[-3000:]
    doc = json.loads(out)
    assert doc["unreachable"] == [victim]
    assert doc["suspects"][0]["kind"] == "unreachable" and doc["suspects"][0]["node"] == victim
    # Hosts of two ranks and a compute thread each on 2 cores: oversubscribed, so the ratios
    # under load (a rank waiting out a time slice moved the 4-byte latency 30x in CI) are not
    # judged, and say so; nothing else may be flagged. The clean-scan rate on a quiet machine is
    # bench/scan_targets.py's (docs/validation.md).
    assert len(doc["suspects"]) == 1, json.dumps(doc["suspects"], indent=1)
    assert any("not judged" in n and "oversubscribed" in n for n in doc["notes"]), doc["notes"]
    alive = [n for n in doc["nodes"] if n["status"] == "ok"]
    assert [n["host"] for n in alive] == hosts.ips[:3]
    assert all(n["pingpong_latency"] for n in alive)
    assert all(n["triad"] for n in alive)
    assert len(doc["links"]) == 6            # the three others, every way
    assert (tmp_path / "killed" / f"fp-pingpong-{victim}.jsonl.partial").exists() or \
        (tmp_path / "killed" / f"fp-pingpong-{victim}.launch.json").exists()
