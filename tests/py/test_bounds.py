"""Every headline number beside its bound (bounds.py, headline.pingpong_headline and
contention_headline, the contention figures): the fraction, the bound unknown said as such, and
a number above its bound called an error of the measurement, on the page too."""

import json
import shutil
import subprocess

import pytest

from jostle.analysis import bounds
from jostle.run import bound_probes
from jostle.analysis import headline as numbers
from jostle import report
from jostle.figures import close, contention as contention_figures
from jostle.records.results import load_run

pytestmark = pytest.mark.unit


def headline(tmp_path, data, name, found=None):
    shutil.copy(data / name, tmp_path / name)
    if found is not None:
        bounds.save(tmp_path, found)
    run = load_run(tmp_path / name)
    return " | ".join(h["text"] for h in numbers.pingpong_headline([run]))


C2C = {"0:1": {"median": 90.0, "ci95": [88.0, 92.0], "n": 100}}


def test_intra_node_bandwidth_against_one_cores_copy(tmp_path, data):
    text = headline(tmp_path, data, "pingpong_intra.jsonl",
                    {"c2c_ns": C2C, "copy_GBps": 1000.0, "memory_latency_ns": 300.0})
    assert "% of one core's copy, 1e+03 GB/s" in text
    assert "× the core-to-core latency of cores 0:1, 90 ns, 95% 88..92" in text
    assert "memory" not in text.split("latency:")[1].split("|")[0]   # no floor it goes below


def test_a_latency_below_the_core_to_core_latency_is_an_error(tmp_path, data):
    """The run's ranks on cores 0 and 1 (its binding): 0.3 µs one way cannot beat a cache
    line that takes 400 ns between them."""
    slow = {"0:1": {"median": 400.0, "ci95": [390.0, 410.0], "n": 100}}
    text = headline(tmp_path, data, "pingpong_intra.jsonl", {"c2c_ns": slow})
    assert "BELOW its bound, the core-to-core latency of cores 0:1, 400 ns" in text
    assert bounds.ERROR in text
    shutil.copy(data / "pingpong_intra.jsonl", tmp_path / "p.jsonl")
    items = numbers.pingpong_headline([load_run(tmp_path / "p.jsonl")])
    assert next(h for h in items if h["topic"] == "latency")["error"]
    # another pair measured only: the lowest of them stands, said so
    other = {"0:5": {"median": 40.0, "ci95": [39.0, 41.0], "n": 100}}
    assert "the run's pair 0:1 was not" in bounds.latency_text(0.3, {"c2c_ns": other}, "0:1")
    assert "(cores 0:5; the run does not say which cores it used)" in bounds.latency_text(
        0.3, {"c2c_ns": other})
    assert "no bound" in bounds.latency_text(2.0, {"c2c_ns": C2C}, "0:1", inter=True)


def test_a_latency_whose_interval_meets_the_bound_is_not_an_error():
    """Measured at other moments, a latency 0.99× its bound with intervals that meet is
    noise (this guest: 0.242 µs, 95% 0.240..0.244, against cores 0:1's 244 ns, 243..245):
    only an interval wholly below the bound's is an error."""
    c2c = {"c2c_ns": {"0:1": {"median": 244.0, "ci95": [243.0, 245.0], "n": 100}}}
    meets = bounds.latency_text(0.242, c2c, "0:1", us_hi=0.244)
    assert "BELOW" not in meets and bounds.ERROR not in meets and "0.99×" in meets
    below = bounds.latency_text(0.242, c2c, "0:1", us_hi=0.2425)
    assert "BELOW its bound" in below and bounds.ERROR in below
    assert "BELOW" in bounds.latency_text(0.242, c2c, "0:1")     # no interval: the median
    assert "BELOW" in bounds.latency_text(0.242, c2c, "0:1", us_hi=float("nan"))


def test_a_bandwidth_above_its_bound_is_an_error(tmp_path, data):
    text = headline(tmp_path, data, "pingpong_intra.jsonl",
                    {"c2c_ns": C2C, "copy_GBps": 0.001})
    assert "from memory" in text and "only while the message stays in cache" in text
    shutil.copy(data / "pingpong_inter.jsonl", tmp_path / "i.jsonl")
    run = load_run(tmp_path / "i.jsonl")
    run.meta["machine"]["nics"][0]["link_gbps"] = 0.001   # an inter-node bound is absolute
    text = " | ".join(h["text"] for h in numbers.pingpong_headline([run]))
    assert "ABOVE its bound" in text and "an error of the measurement" in text


def test_unknown_bounds_are_said(tmp_path, data):
    text = headline(tmp_path, data, "pingpong_intra.jsonl")
    assert "one core's copy not measured here" in text
    assert "core-to-core latency not measured here" in text


def test_inter_node_bandwidth_against_the_link(tmp_path, data):
    text = headline(tmp_path, data, "pingpong_inter.jsonl", {})
    link = json.loads((data / "pingpong_inter.jsonl").read_text().splitlines()[0])
    gbps = max(n["link_gbps"] for n in link["machine"]["nics"])
    assert f"of the NIC's link, {gbps:.3g} GB/s" in text


def test_an_intra_node_bandwidth_from_memory_above_one_cores_copy_is_an_error(tmp_path, data):
    """The fastest message (16 MiB) is larger than the last-level cache: it comes from memory,
    and above one core's copy it is an error, flagged for the page."""
    shutil.copy(data / "pingpong_intra.jsonl", tmp_path / "p.jsonl")
    bounds.save(tmp_path, {"c2c_ns": C2C, "copy_GBps": 0.001})
    run = load_run(tmp_path / "p.jsonl")
    run.meta["machine"]["llc_bytes"] = 1 << 20
    items = numbers.pingpong_headline([run])
    bw = next(h for h in items if h["topic"] == "bandwidth")
    assert "ABOVE its bound, one core's copy" in bw["text"] and bounds.ERROR in bw["text"]
    assert bw["error"] and not next(h for h in items if h["topic"] == "latency")["error"]


def contention_record(folder, rank_gbps, together_gbps, array_bytes=64 << 20, llc=32 << 20,
                      hosts=("n1", "n1"), cores=2, name="fig1-triad-c02", pairs=None):
    """A contention run of 2 ranks computing on CORES cores each (both on one host unless HOSTS
    says otherwise): rank 0's compute_throughput RANK_GBPS alone and TOGETHER_GBPS together,
    bandwidth 5 GB/s alone and 4 together at 64 MiB, latency 1 and 1.5 µs at 4 B."""
    folder.mkdir(parents=True, exist_ok=True)
    compute = [{"core": c, "mem_numa": 0} for c in range(cores)]
    meta = {"type": "meta", "schema": 1, "tool": "jostle", "version": "0.1.0", "git": "abc",
            "benchmark": "contention", "argv": ["jostle-bench", "contention"],
            "start": "2026-11-26T02:00:00Z", "hosts": list(hosts),
            "mpi": {"library": "Open MPI v4.1.4", "ranks": 2, "thread_level": "funneled"},
            "machine": {"cpu": "Fake CPU", "cores": 8, "pus": 8, "numa_nodes": 1,
                        "llc_bytes": llc, "nics": []},
            "kernel": {"name": "triad", "bytes_per_sweep": 24, "array_bytes": array_bytes,
                       "threads": cores},
            "binding": {"0": {"comm": {"core": 6}, "compute": compute},
                        "1": {"comm": {"core": 7}, "compute": compute}},
            "warnings": []}
    if pairs:   # --pairs N: 2N ranks, the flows' ping-pongs at once
        meta["flows"] = {"pairs": pairs, "comm_threads": 0, "flows": pairs}
    lines = [meta]

    def point(phase, size, metric, unit, v):
        params = {"phase": phase, "size": size, "kernel": "triad", "compute_cores": cores,
                  "rep": 0, **({"pairs": pairs} if pairs else {})}
        lines.append({"type": "point", "params": params,
                      "metric": metric, "unit": unit, "n": 1, "min": v, "p25": v, "median": v,
                      "p75": v, "p99": v, "max": v, "mean": v, "stddev": 0, "ci95": [v, v],
                      "converged": True, "elapsed_s": 0.1})
    for size in (4, 64 << 20):
        point("compute", size, "compute_throughput", "GB/s", rank_gbps)
        point("together", size, "compute_throughput", "GB/s", together_gbps)
        point("comm", size, "bandwidth", "MB/s", 5000.0 if size > 4 else 4.0)
        point("together", size, "bandwidth", "MB/s", 4000.0 if size > 4 else 2.7)
        point("comm", size, "latency", "us", 1.0)
        point("together", size, "latency", "us", 1.5)
    lines.append({"type": "end", "status": "ok", "points": len(lines) - 1, "elapsed_s": 1.0})
    (folder / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder


LIMITS = {"c2c_ns": {"6:7": {"median": 90.0, "ci95": [88.0, 92.0], "n": 100}},
          "copy_GBps": 20.0, "triad_GBps": 100.0, "triad_threads": 8}


def contention_items(folder, limits):
    bounds.save(folder, limits)
    return numbers.contention_headline([load_run(p) for p in sorted(folder.glob("*.jsonl"))])


def test_the_nodes_compute_throughput_against_its_triad_on_all_cores(tmp_path):
    """Rank 0's 10 GB/s on 2 cores, 4 threads on the node: the node 20 GB/s, 20% of 100."""
    items = contention_items(contention_record(tmp_path, 10.0, 8.0), LIMITS)
    comp = next(h for h in items if h["topic"] == "compute under contention")
    assert "the node's 4 computing threads 20 GB/s alone, 16 GB/s together" in comp["text"]
    assert "20% of the node's STREAM triad on all 8 cores, 100 GB/s" in comp["text"]
    comm = next(h for h in items if h["topic"] == "communication under contention")
    assert "25% of one core's copy, 20 GB/s" in comm["text"]
    lat = next(h for h in items if h["topic"] == "latency under contention")
    assert "the core-to-core latency of cores 6:7, 90 ns" in lat["text"]
    assert not any(h["error"] for h in items)


def test_a_compute_throughput_above_the_triad_is_an_error(tmp_path):
    items = contention_items(contention_record(tmp_path, 10.0, 8.0), {**LIMITS, "triad_GBps": 5.0})
    comp = next(h for h in items if h["topic"] == "compute under contention")
    assert "ABOVE its bound, the node's STREAM triad on all 8 cores 5 GB/s (400%)" in comp["text"]
    assert bounds.ERROR in comp["text"] and comp["error"]
    # arrays that fit the caches may beat the triad from memory: said, not an error
    items = contention_items(contention_record(tmp_path / "c", 10.0, 8.0, array_bytes=1 << 20),
                             {**LIMITS, "triad_GBps": 5.0})
    comp = next(h for h in items if h["topic"] == "compute under contention")
    assert "the arrays fit the caches" in comp["text"] and not comp["error"]


def test_unknown_triad_is_said(tmp_path):
    items = contention_items(contention_record(tmp_path, 10.0, 8.0), {"copy_GBps": 20.0})
    comp = next(h for h in items if h["topic"] == "compute under contention")
    assert "STREAM triad on all cores not measured here" in comp["text"]


def test_the_contention_figure_draws_the_triad_and_marks_what_is_above_it(tmp_path):
    folder = contention_record(tmp_path, 10.0, 8.0)
    bounds.save(folder, {**LIMITS, "triad_GBps": 5.0})
    figs = contention_figures.build([load_run(folder / "fig1-triad-c02.jsonl")])
    try:
        fig = next(f for f in figs if f.id == "contention-fig1")
        assert "the node's STREAM triad on all cores (5 GB/s" in fig.caption
        assert "4 point(s) above the node's triad" in fig.caption and bounds.ERROR in fig.caption
        labels = [line.get_label() for ax in fig.fig.axes for line in ax.get_lines()]
        assert any(x.startswith("bound: node's triad 5 GB/s") for x in labels)
        assert any(x.startswith("bound: one core's copy, 20 GB/s") for x in labels)
        assert any(x.startswith("bound: the core-to-core latency of cores 6:7, 90 ns")
                   for x in labels)
        assert "dotted on the latency: the core-to-core latency of cores 6:7" in fig.caption
    finally:
        close(figs)


@pytest.mark.pages
def test_the_page_shows_a_number_above_its_bound_as_an_error(tmp_path):
    folder = contention_record(tmp_path / "c", 10.0, 8.0)
    bounds.save(folder, {**LIMITS, "triad_GBps": 5.0})
    html = report.write([folder], tmp_path / "r.html", figures_dir=tmp_path / "f").read_text()
    # an error of the page's own style: the row of the summary table and a notice
    table = html[html.index('id="summary-table"'):html.index("</table>")]
    row = next(r for r in table.split("<tr") if 'class="error"' in r)
    assert "node compute throughput, triad" in row and "<b>ERROR</b>" in row
    errors = html[html.index('<div class="errors">'):]
    assert "<li>past its bound: fig1, triad on 2 core(s) per rank" in errors


def test_stream_measures_the_triad_on_every_core_and_refuses_bad_values(built):
    """jostle-bench's STREAM query (no MPI)."""
    out = subprocess.run([built(), "--stream", "--rounds", "2", "--seconds", "0.05",
                          "--bytes", "8M"], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert got["threads"] >= 1 and got["GBps"] >= got["GBps_median"] >= got["GBps_worst"] > 0
    for bad in (["--seconds", "0"], ["--bytes", "1"], ["--rounds", "x"], ["--nope"]):
        r = subprocess.run([built(), "--stream", *bad], capture_output=True, text=True)
        assert r.returncode == 2 and bad[-1] in r.stderr


def test_the_heat_map_gives_each_cell_as_a_share_of_the_triad(tmp_path):
    """Two counts of talking pairs: each cell of the computation's side says its share of the
    node's triad (rank 0's together 8 GB/s on 2 cores, 4 threads on the node: 16 of 100)."""
    for p in (1, 2):
        contention_record(tmp_path, 10.0, 8.0, name=f"fig1-triad-p{p}-t0-c02", pairs=p)
    bounds.save(tmp_path, LIMITS)
    figs = contention_figures.build([load_run(x) for x in sorted(tmp_path.glob("*.jsonl"))])
    try:
        heat = next(f for f in figs if f.id == "contention-flows")
        cells = [t.get_text() for ax in heat.fig.axes for t in ax.texts]
        assert sum("16% of triad" in c for c in cells) == 2
        assert "share of the node's STREAM triad on all cores (100 GB/s)" in heat.caption
    finally:
        close(figs)


@pytest.mark.mpi
def test_c2c_measures_each_pair_and_refuses_bad_values(built, tmp_path):
    """jostle-bench c2c alone (an MPI singleton), as the bounds step runs it: one point per
    pair, one way and round trip from the same samples; a pair of one core, or of a core
    this host lacks, is refused naming the value."""
    bench = built()
    got = bound_probes.c2c(bench, pairs="0:1,1:0", max_time=0.1)
    assert set(got["c2c_ns"]) == {"0:1", "1:0"}
    for v in got["c2c_ns"].values():
        assert 1.0 < v["median"] < 100_000 and v["ci95"][0] <= v["median"] <= v["ci95"][1]
    for bad in ("0:0", "0:4096", "x"):
        r = subprocess.run([str(bench), "c2c", "--pairs", bad], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 2 and f"'{bad}'" in r.stderr and "Traceback" not in r.stderr
