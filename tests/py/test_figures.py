import json
import warnings
from pathlib import Path

import pytest

from jostle import figures
from jostle.figures import pingpong
from jostle.records.results import load, load_run

pytestmark = pytest.mark.unit


def test_three_ranges_from_the_fixtures(data):
    runs = load([data / "pingpong_intra.jsonl", data / "pingpong_inter.jsonl"])
    figs = figures.build(runs)
    try:
        assert [f.id for f in figs] == ["pingpong-bytes", "pingpong-fine", "pingpong-pow2"]
        pow2 = figs[2].fig
        rtt_ax, bw_ax = pow2.axes
        assert rtt_ax.get_xscale() == "log" and rtt_ax.get_yscale() == "log"
        assert figs[0].fig.axes[0].get_xscale() == "linear"
        labels = [t.get_text() for t in rtt_ax.get_legend().get_texts()]
        assert labels == ["intra-node (nodeA), Open MPI 4.1.4", "inter-node (nodeA,nodeB), MPICH 4.0.2",
                          "dotted: mean (what OSU prints)"]
        # each curve's mean drawn dotted beside its median, in the curve's colour
        dotted = [ln for ln in rtt_ax.get_lines() if ln.get_linestyle() == ":" and len(ln.get_xdata())]
        assert len(dotted) == 2
        assert "GB/s" in bw_ax.get_ylabel()  # the fixtures peak at 4 and 10 GB/s
        # median lines: the last pow2 point of the intra run is its 16 MiB median
        x, y = rtt_ax.get_lines()[0].get_data()
        assert x[-1] == 1 << 24
        df = runs[0].points
        assert y[-1] == pytest.approx(df[(df["size"] == 1 << 24) & (df.metric == "rtt")]["median"].iloc[0])
        texts = " ".join(t.get_text() for t in pow2.texts)
        assert "oversubscribed" in texts and "one NUMA node" in texts and "nodeB" not in texts
    finally:
        figures.close(figs)


def test_saved_png_and_svg_are_real_images(tmp_path, data):
    figs = figures.build(load([data / "pingpong_intra.jsonl"]))
    paths = figures.save(figs, tmp_path)
    figures.close(figs)
    assert len(paths) == 6
    for p in paths:
        head = p.read_bytes()[:8]
        if p.suffix == ".png":
            assert head == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 20_000
        else:
            assert b"<svg" in p.read_bytes()[:2000]


def test_only_powers_of_two_gives_one_log_log_figure(tmp_path, data):
    lines = (data / "pingpong_inter.jsonl").read_text().splitlines()
    keep = [l for l in lines[1:-1] if json.loads(l)["params"]["size"] in (1 << k for k in range(10, 25))]
    end = json.loads(lines[-1])
    end["points"] = len(keep)
    p = tmp_path / "p.jsonl"
    p.write_text("\n".join([lines[0], *keep, json.dumps(end)]) + "\n")
    figs = figures.build([load_run(p)])
    assert [f.id for f in figs] == ["pingpong-pow2"]
    figures.close(figs)


def test_caveats_come_from_the_metadata(data):
    intra, inter = load([data / "pingpong_intra.jsonl", data / "pingpong_inter.jsonl"])
    assert intra.caveats == ["oversubscribed", "one NUMA node"]
    assert inter.caveats == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        part = load_run(data / "partial.jsonl.partial", allow_incomplete=True)
    assert part.caveats[-1] == "INCOMPLETE (30 points)"


def test_same_labels_are_told_apart(tmp_path, data):
    for n in ("x", "y"):
        (tmp_path / f"{n}.jsonl").write_text((data / "pingpong_intra.jsonl").read_text())
    runs = load([tmp_path])
    assert pingpong._labels(runs) == ["intra-node (nodeA), Open MPI 4.1.4 [x]",
                                      "intra-node (nodeA), Open MPI 4.1.4 [y]"]


def test_benchmark_without_figure_module_gives_no_figure(data):
    run = load_run(data / "pingpong_intra.jsonl")
    run.meta = dict(run.meta, benchmark="nosuch")
    assert figures.build([run]) == []


def test_short_mpi_names_and_people_numbers():
    import pandas as pd
    from jostle.records.results import Run
    from jostle.units import number
    lib = lambda s: Run(Path("x.jsonl"), {"mpi": {"library": s}}, pd.DataFrame(), None)
    assert lib("MPICH Version:\t4.0.2").short_mpi == "MPICH 4.0.2"
    assert lib("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4").short_mpi == "Open MPI 4.1.4"
    assert [number(x) for x in (15650, 9.9996, 0.1953, 3.2e-16, 0)] == \
        ["15\u202f650", "10.0", "0.195", "3.20e-16", "0"]
