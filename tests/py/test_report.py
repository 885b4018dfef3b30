import base64
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from jostle import report
import pytest

from conftest import DATA

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The page of the two ping-pong runs of data/, an incomplete run and one planned but never
    run, written once with its figures saved: (the campaign, the page, the figures' directory)."""
    d = tmp_path_factory.mktemp("report")
    camp = d / "c1"
    camp.mkdir()
    for name in ("pingpong_intra.jsonl", "pingpong_inter.jsonl"):
        shutil.copy(DATA / name, camp / name)
    shutil.copy(DATA / "partial.jsonl.partial", camp / "cut.jsonl.partial")
    (camp / "campaign.json").write_text('{"runs": [{"name": "never"}, {"name": "pingpong_intra"}]}')
    html = report.write([camp], d / "r.html", figures_dir=d / "figs").read_text()
    return camp, html, d / "figs"


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory):
    """The page of the two ping-pong runs with markup in every string a record gives it."""
    d = tmp_path_factory.mktemp("hostile")
    for name in ("pingpong_intra.jsonl", "pingpong_inter.jsonl"):
        shutil.copy(DATA / name, d / name)
    p = d / "pingpong_intra.jsonl"
    p.write_text(p.read_text()
                 .replace("Fake CPU @ 2.5GHz", "<script>alert(1)</script>")
                 .replace("oversubscribed: 2 ranks", "<script>w()</script> 2 ranks")
                 .replace('"library":"Open MPI', '"library":"<script>m()</script> Open MPI')
                 .replace('"jostle-bench","pingpong"]', '"jostle-bench","<script>a()</script>"]'))
    return report.write([d], d.parent / "r.html").read_text()


@pytest.mark.pages
def test_report_is_self_contained_with_all_sections(page):
    campaign_dir, html, figs = page
    for section in ("warnings", "runs", "machine", "figures", "results"):
        assert f'<section id="{section}">' in html
    # no external asset of any kind: the one link is the download of the points' CSV
    assert not re.search(r'(src|href)="(?!data:|r\.points\.csv")', html) and "<link" not in html
    imgs = re.findall(r'src="data:image/(png|svg\+xml);base64,([A-Za-z0-9+/=]+)"', html)
    assert len(imgs) == 3 and all(base64.b64decode(i)[:4] == b"\x89PNG" if kind == "png"
                                  else b"<svg" in base64.b64decode(i)[:800] for kind, i in imgs)
    # three levels of notice: errors (the incomplete run, the missing run), warnings, notes
    # about the machine (oversubscribed), each in its own style
    notices = html[html.index('id="warnings"'):html.index('id="runs"')]
    errors = notices[notices.index('class="errors"'):notices.index("</div>")]
    assert "cut: incomplete run" in errors and "never: planned in the campaign" in errors
    notes = notices[notices.index('class="notes"'):]
    assert "oversubscribed: 2 ranks bound on 1 core" in notes[:notes.index("</ul>")]
    assert "oversubscribed" not in errors
    assert "INCOMPLETE" in html and "(incomplete)" in html
    # machine metadata; the per-point tables in the CSV beside the page, linked, not inline
    assert "Fake CPU @ 2.5GHz" in html and "mlx5_0" in html and "MPICH Version: 4.0.2" in html
    results = html[html.index('id="results"'):html.index("<details><summary>Runs and their")]
    assert '<a href="r.points.csv" download>' in results and "<th>ci95_lo</th>" not in results
    import pandas as pd
    csv = pd.read_csv(campaign_dir / ".." / "r.points.csv")
    assert {"run", "median", "p75", "ci95_lo", "ci95_hi"} <= set(csv.columns)
    assert set(csv.run) == {"pingpong_intra", "pingpong_inter", "cut"}
    # the runs and their command lines last, folded (issue 13)
    assert html.rindex("<details>") < html.index('id="runs"')
    assert sorted(p.name for p in figs.iterdir())[0] == "pingpong-bytes.png"


@pytest.mark.pages
def test_report_escapes_metadata(hostile_page):
    html = hostile_page
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.pages
def test_every_record_string_is_escaped_where_the_page_shows_it(hostile_page):
    html = hostile_page
    assert "<script" not in html
    section = {s: html[html.index(f'<section id="{s}">'):] for s in ("warnings", "runs", "machine")}
    assert "&lt;script&gt;w()&lt;/script&gt; 2 ranks" in section["warnings"]
    assert "<code>jostle-bench &lt;script&gt;a()&lt;/script&gt;</code>" in section["runs"]
    assert "<td>&lt;script&gt;m()&lt;/script&gt; Open MPI" in section["machine"]


@pytest.mark.system
def test_report_renders_from_a_built_wheel(campaign_dir, tmp_path):
    """The templates are package data: a non-editable install (the wheel, unpacked as pip
    would) writes the same sections with no access to the source tree."""
    src = tmp_path / "src"
    shutil.copytree(Path(report.__file__).parents[1], src, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "-w", str(tmp_path / "dist"), str(src)],
                   check=True, capture_output=True)
    site = tmp_path / "site"
    zipfile.ZipFile(next((tmp_path / "dist").glob("jostle-*.whl"))).extractall(site)
    shutil.rmtree(src)
    code = ("import sys, jostle.report as r; assert r.__file__.startswith(sys.argv[1]), r.__file__;"
            "r.write([sys.argv[2]], sys.argv[3])")
    subprocess.run([sys.executable, "-c", code, str(site), str(campaign_dir), str(tmp_path / "r.html")],
                   check=True, env={**os.environ, "PYTHONPATH": str(site)}, cwd=tmp_path)
    html = (tmp_path / "r.html").read_text()
    assert all(f'<section id="{s}">' in html for s in ("warnings", "runs", "machine", "results"))


@pytest.mark.pages
def test_clean_runs_say_no_warnings(tmp_path, data):
    shutil.copy(data / "pingpong_inter.jsonl", tmp_path / "x.jsonl")
    html = report.write([tmp_path], tmp_path / "r.html").read_text()
    assert "No errors or warnings recorded." in html


@pytest.mark.pages
def test_summary_opens_on_the_ping_pong_headline(page):
    """The first section gives each ping-pong run's smallest-message latency and highest
    bandwidth with the interval of their median, taken from the run's own points (the
    complete runs: an incomplete one has no headline)."""
    from jostle.records.results import load_run
    campaign_dir, html, _ = page
    summary = html[html.index('id="summary"'):html.index('id="key-figures"')]
    prose = summary[summary.index('<ul class="headline">'):]
    runs = [load_run(f) for f in sorted(campaign_dir.glob("*.jsonl"))]
    pp = [r for r in runs if r.benchmark == "pingpong"]
    assert pp and prose.count("one-way latency") == len(pp)
    lat = pp[0].points[(pp[0].points.metric == "latency") & (pp[0].points["size"] > 0)]
    first = lat.sort_values("size").iloc[0]
    assert f"{int(first['size'])} B one-way latency: {first['median']:.3g} µs" in prose
    # the same number as a row of the summary table: value, its interval, bound, verdict
    table = summary[summary.index('id="summary-table"'):summary.index("</table>")]
    row = next(r for r in table.split("<tr")
               if f"{int(first['size'])} B one-way latency ({pp[0].name})" in r)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells[1] == f"{first['median']:.3g} µs"
    assert cells[2] == f"{first['ci95_lo']:.3g}..{first['ci95_hi']:.3g}"
    assert cells[-1] in ("no bound", "within bound")   # an inter-node latency has none


@pytest.mark.pages
def test_machine_section_names_every_librarys_transport(tmp_path, data):
    """Two runs on one machine with two MPI libraries: both, each with how it moves data, in
    one section although the clock and free memory each run saw differ."""
    import json
    d = tmp_path / "c"
    d.mkdir()
    for name, mpi in (("a", {"library": "Open MPI v4.1.4, package: Debian OpenMPI",
                             "transport": {"pml": "^ucx", "btl": "self,vader"}}),
                      ("b", {"library": "MPICH Version:\t4.0.2",
                             "library_full": "MPICH Version:\t4.0.2\nMPICH Device:\tch4:ofi\n"})):
        lines = (data / "pingpong_intra.jsonl").read_text().splitlines()
        meta = json.loads(lines[0])
        meta["mpi"].update(mpi)
        meta["machine"].update(cpu_mhz=2000 + len(name) * ord(name), memory_bytes=ord(name) << 30)
        (d / f"{name}.jsonl").write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n")
    html = report.write([d], tmp_path / "r.html", figures_dir=tmp_path / "f").read_text()
    machine = html[html.index('id="machine"'):]
    assert machine.count("MPI transport") == 1 and machine.count("host (rank 0)") == 1
    assert "Open MPI 4.1.4: pml ^ucx; btl self,vader; MPICH 4.0.2: device ch4:ofi" in machine
    assert "every component but x" in machine
