"""Contention analysis (pairing alone/together, degradation), its figures and report section.

data/contention_pairs.jsonl is hand-made (2 compute cores, sizes 4 B and 64 MiB, 2 reps):
    size, rep   latency alone→together   bandwidth alone→together   compute GB/s alone→together
    4, 0        1 → 1.5   (+50 %)        8 → 6     (25 %)           10 → 9    (10 %)
    4, 1        1 → 2.5   (+150 %)       8 → 4     (50 %)           10 → 8    (20 %)
    64M, 0      8000 → 10000 (+25 %)     8000 → 6000 (25 %)         10 → 7.5  (25 %)
    64M, 1      8000 → 16000 (+100 %)    8000 → 4000 (50 %)         10 → 5    (50 %)
make_run() below writes synthetic runs of any study for the figure tests.
"""

import functools
import json
import math

import pandas as pd
import pytest

from jostle.analysis import contention
from jostle import figures, report
from jostle.figures import contention as cfig
from jostle.records.results import load_run

from conftest import DATA
from contention_lines import M64, run_lines

pytestmark = pytest.mark.unit

def test_degradation_is_signed_so_that_positive_is_worse():
    assert contention.degradation("latency", 2.0, 3.0) == pytest.approx(0.5)
    assert contention.degradation("bandwidth", 8.0, 6.0) == pytest.approx(0.25)
    assert contention.degradation("compute_bandwidth", 10.0, 12.0) == pytest.approx(-0.2)  # faster
    for args in (("latency", 0.0, 1.0), ("latency", math.nan, 1.0), ("stalled_fraction", 0.2, 0.3),
                 ("unknown", 1.0, 2.0)):
        assert math.isnan(contention.degradation(*args))


def test_pairs_match_phase_and_rep(data):
    run = load_run(data / "contention_pairs.jsonl")
    p = contention.pairs(run.points, run.param_names)
    assert "phase" not in p and len(p) == 4 * 5          # 4 (size, rep) × 5 metrics paired
    def one(size, rep, metric):
        row = p[(p["size"] == size) & (p.rep == rep) & (p.metric == metric)]
        assert len(row) == 1
        return row.iloc[0]
    r = one(4, 1, "latency")
    assert (r.alone, r.together, r.unit) == (1.0, 2.5, "us") and r.degradation == pytest.approx(1.5)
    assert one(M64, 0, "bandwidth").degradation == pytest.approx(0.25)
    assert one(M64, 1, "compute_bandwidth").degradation == pytest.approx(0.5)
    assert one(4, 0, "compute_flops").degradation == pytest.approx(0.1)
    assert one(4, 0, "compute_bandwidth").alone == 10.0   # alone = the compute phase, not comm


def test_summary_takes_the_median_over_repetitions(data):
    s = contention.summary(contention.run_pairs([load_run(data / "contention_pairs.jsonl")]))
    assert "rep" not in s and set(s.reps) == {2}
    got = {(int(r.size), r.metric): (r.degradation, r.deg_min, r.deg_max, r.together)
           for r in s.itertuples()}
    assert got[(4, "latency")] == pytest.approx((1.0, 0.5, 1.5, 2.0))
    assert got[(4, "bandwidth")] == pytest.approx((0.375, 0.25, 0.5, 5.0))
    assert got[(4, "compute_bandwidth")] == pytest.approx((0.15, 0.1, 0.2, 8.5))
    assert got[(M64, "latency")] == pytest.approx((0.625, 0.25, 1.0, 13000.0))
    assert got[(M64, "compute_bandwidth")] == pytest.approx((0.375, 0.25, 0.5, 6.25))


def test_unpaired_and_missing_params_do_not_pair():
    rows = [{"phase": ph, "size": 4, "ai": math.nan, "metric": m, "unit": "us", "median": v}
            for ph, m, v in (("comm", "latency", 1.0), ("together", "latency", 3.0),
                             ("together", "compute_bandwidth", 5.0),     # no compute phase
                             ("comm", "bandwidth", 9.0))]                 # never together
    p = contention.pairs(pd.DataFrame(rows), ["phase", "size", "ai"])
    assert list(p.metric) == ["latency"] and p.degradation.iloc[0] == pytest.approx(2.0)
    assert contention.pairs(pd.DataFrame(), ["phase"]).empty


# ------------------------------------------------------------ synthetic runs

def make_run(path, **kw):
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in run_lines(**kw))
    return path


def study_runs(d):
    """One campaign directory with runs of every study, as `jostle contention` names them."""
    d.mkdir(parents=True, exist_ok=True)
    over = ["oversubscribed: 6 bound threads of 2 ranks on host h, which has 2 cores"]
    for n in range(3):
        make_run(d / f"fig1-triad-c{n:02d}-quick.jsonl", argv=["jostle-bench", "contention"],
                 cores=n, warnings=over if n else [])
        for core in ("near", "far"):
            for mem in ("near", "far"):
                make_run(d / f"fig2-triad-core{core}-mem{mem}-c{n:02d}.jsonl", cores=n,
                         argv=["jostle-bench", "contention", "--comm-core", core, "--comm-mem", mem])
    make_run(d / "fig3-triad-c02.jsonl", argv=[], sizes=[4 ** k for k in range(1, 14)])
    for ai in (1 / 12, 1.0, 16.0):
        make_run(d / f"fig4-triad-ai{ai:.4g}-c02.jsonl", argv=[], ai=ai)
    for k in ("cg", "gemm", "triad", "cpu"):
        make_run(d / f"usecases-{k}-c02.jsonl", argv=[], kernel=k)
    return d


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A campaign of every study and a ping-pong run, its page written once with its figures
    saved (PNG and SVG): (the campaign, the page, the figures' directory, the contention
    figures the page drew). The figures are kept as drawn for the page, not drawn again for
    the tests that read them: a second drawing cost 5 s of CPU."""
    d = study_runs(tmp_path_factory.mktemp("contention") / "camp")
    (d / "pp.jsonl").write_text((DATA / "pingpong_intra.jsonl").read_text())
    saved = d.parent / "figs"
    drawn, build = [], cfig.build

    @functools.wraps(build)
    def keep(*args, **kwargs):
        out = build(*args, **kwargs)
        drawn.extend(out)
        return out
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cfig, "build", keep)
        html = report.write([d], d.parent / "r.html", figures_dir=saved).read_text()
    return d, html, saved, drawn


@pytest.mark.pages
def test_one_figure_per_study_with_both_sides_and_caveats(study):
    _, _, saved, figs = study
    by_id = {f.id: f for f in figs}
    assert set(by_id) == {"contention-fig1-quick", "contention-fig2", "contention-fig3",
                          "contention-fig4", "contention-usecases"}
    fig1 = by_id["contention-fig1-quick"].fig
    assert len(fig1.axes) == 6                    # 4 B and 64 MiB rows × comm, compute, degradation
    lat, comp, deg = fig1.axes[:3]
    assert "latency" in lat.get_ylabel() and "compute bandwidth" in comp.get_ylabel()
    alone, together = [ln for ln in lat.get_lines() if ln.get_linestyle() != "None"][:2]
    # every median with its 95% CI: one error-bar container per series and side
    assert len(lat.containers) >= 2 and all(len(c.lines[2]) for c in lat.containers)
    assert "confidence interval" in by_id["contention-fig1-quick"].caption
    assert alone.get_linestyle() == "-" and together.get_linestyle() == "--"
    assert list(together.get_xdata()) == [0, 1, 2]
    assert together.get_ydata()[2] == pytest.approx(1.0008 * 1.2)   # 1 + 4/5000, +10 %/core
    comm_pct = deg.get_lines()[0]
    assert comm_pct.get_ydata() == pytest.approx([0.0, 10.0, 20.0])
    compute_pct = deg.get_lines()[1]
    assert list(compute_pct.get_xdata()) == [1, 2]               # no compute with 0 cores
    assert compute_pct.get_ydata() == pytest.approx([5.0, 10.0])
    caveat = " ".join(t.get_text() for t in fig1.texts)
    assert "oversubscribed (2 of 3 runs" in caveat and "fig1-triad-c01-quick" in caveat
    fig2 = by_id["contention-fig2"].fig
    legend = [t.get_text() for t in fig2.axes[0].get_legend().get_texts()]
    assert legend == ["comm thread far, data far", "comm thread far, data near",
                      "comm thread near, data far", "comm thread near, data near"]
    assert fig2.axes[0].get_xlabel() == "computing cores per rank"
    assert by_id["contention-fig3"].fig.axes[0].get_xscale() == "log"
    fig4 = by_id["contention-fig4"].fig.axes[0]
    assert fig4.get_xscale() == "log" and sorted(fig4.get_lines()[0].get_xdata()) == pytest.approx([1 / 12, 1, 16])
    use = by_id["contention-usecases"].fig
    texts = " ".join(t.get_text() for ax in use.axes for t in ax.texts)
    assert "counters unavailable on this machine" in texts and "perf_event_paranoid" in texts
    bars = use.axes[0].patches                    # 4 kernels × (2 sizes × comm, compute)
    assert len(bars) == 16 and bars[0].get_height() == pytest.approx(20.0)  # cg latency +20 %
    assert "positive is worse" in fig1._suptitle.get_text()
    # saved as the report saves them (figures.save, in the fixture): both formats
    paths = sorted(saved.glob("contention-*"))
    assert {p.name for p in paths} >= {"contention-fig1-quick.png", "contention-usecases.svg"}
    assert len(paths) == 2 * len(by_id) and all(p.stat().st_size > 10_000 for p in paths)


def test_usecases_show_stalled_cycles_when_counted(tmp_path):
    for k in ("cg", "gemm"):
        make_run(tmp_path / f"usecases-{k}-c02.jsonl", argv=[], kernel=k, stalled=True,
                 counters={"backend": "perf", "events": ["cpu-cycles", "stalled-cycles-backend"]})
    figs = cfig.build([load_run(p) for p in sorted(tmp_path.glob("*.jsonl"))])
    try:
        ax = figs[0].fig.axes[1]
        assert "stalled" in ax.get_ylabel() and len(ax.patches) == 4
        assert ax.patches[2].get_height() == pytest.approx(50.0)    # cg together: 0.3 + 0.2
    finally:
        figures.close(figs)


def test_run_names_decide_the_study_else_the_data(tmp_path):
    r = load_run(make_run(tmp_path / "mine.jsonl", argv=[], sizes=[4 ** k for k in range(1, 6)]))
    assert contention.study_of(r) == ("fig3", False)
    r = load_run(make_run(tmp_path / "fig2-x-c01-quick.jsonl", argv=[]))
    assert contention.study_of(r) == ("fig2", True)


@pytest.mark.pages
def test_report_gains_a_contention_section(tmp_path, data, study):
    _, html, _, _ = study
    section = html[html.index('<section id="contention">'):html.index('<section id="results">')]
    assert "Contention: degradations" in section and "<th>degradation %</th>" in section
    assert "fig1-triad-c02-quick" in section and "comm thread near, data far" in section
    assert html.count('id="contention-') == 5 and 'id="pingpong-pow2"' in html
    only_pp = tmp_path / "pp"
    only_pp.mkdir()
    (only_pp / "pp.jsonl").write_text((data / "pingpong_intra.jsonl").read_text())
    assert '<section id="contention">' not in report.write([only_pp], tmp_path / "p.html").read_text()


def test_run_costs_split_startup_from_measuring(tmp_path, data):
    run = load_run(data / "contention_pairs.jsonl")
    run.launch = {"elapsed_s": 30.0}
    startup, measuring = contention.run_costs([run])
    assert measuring == pytest.approx(12 * 0.5)     # 12 points (phase, size, rep) of 0.5 s
    assert startup == pytest.approx(24.0)
