"""Every headline number beside its bound (bounds.py, advise.pingpong_headline): the
fraction, the bound unknown said as such, and a number above its bound called an error."""

import json
import shutil

from jostle import advise, bounds
from jostle.results import load_run


def headline(tmp_path, data, name, found=None):
    shutil.copy(data / name, tmp_path / name)
    if found is not None:
        bounds.save(tmp_path, found)
    run = load_run(tmp_path / name)
    return " | ".join(h["text"] for h in advise.pingpong_headline([run]))


def test_intra_node_bandwidth_against_one_cores_copy(tmp_path, data):
    text = headline(tmp_path, data, "pingpong_intra.jsonl",
                    {"memory_latency_ns": 90.0, "copy_GBps": 1000.0})
    assert "% of one core's copy, 1e+03 GB/s" in text
    assert "× the memory-latency floor 90 ns" in text


def test_a_bandwidth_above_its_bound_is_an_error(tmp_path, data):
    text = headline(tmp_path, data, "pingpong_intra.jsonl",
                    {"memory_latency_ns": 90.0, "copy_GBps": 0.001})
    assert "from memory" in text and "only while the message stays in cache" in text
    shutil.copy(data / "pingpong_inter.jsonl", tmp_path / "i.jsonl")
    run = load_run(tmp_path / "i.jsonl")
    run.meta["machine"]["nics"][0]["link_gbps"] = 0.001   # an inter-node bound is absolute
    text = " | ".join(h["text"] for h in advise.pingpong_headline([run]))
    assert "ABOVE its bound" in text and "an error of the measurement" in text


def test_unknown_bounds_are_said(tmp_path, data):
    text = headline(tmp_path, data, "pingpong_intra.jsonl")
    assert "one core's copy not measured here" in text and "floor not measured" in text


def test_inter_node_bandwidth_against_the_link(tmp_path, data):
    text = headline(tmp_path, data, "pingpong_inter.jsonl", {})
    link = json.loads((data / "pingpong_inter.jsonl").read_text().splitlines()[0])
    gbps = max(n["link_gbps"] for n in link["machine"]["nics"])
    assert f"of the NIC's link, {gbps:.3g} GB/s" in text
