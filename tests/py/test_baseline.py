"""`jostle baseline save|check|list` and the report's comparison section, on the records of
test_compare.make_campaign."""

import json

from jostle import cli
from test_compare import make_campaign
import pytest

pytestmark = pytest.mark.unit


def jostle(capsys, *argv):
    rc = cli.main([*map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_save_list_check(tmp_path, data, capsys):
    ref = make_campaign(tmp_path / "ref", data, 3, seed=1, job_sd=0.005)
    bl = tmp_path / "baselines"
    rc, out, err = jostle(capsys, "baseline", "save", ref, "--name", "pp", "--baselines", bl)
    assert rc == 0 and (bl / "pp.json").is_file()
    saved = json.loads((bl / "pp.json").read_text())
    entry = saved["machines"][0]
    assert entry["machine"]["cpu"] == "Fake CPU @ 2.5GHz" and len(entry["runs"]) == 3
    assert len(entry["points"]) == 3 * 213
    # saved again: the machine's entry is replaced, not added
    assert jostle(capsys, "baseline", "save", ref, "--name", "pp", "--baselines", bl)[0] == 0
    assert len(json.loads((bl / "pp.json").read_text())["machines"]) == 1
    rc, out, _ = jostle(capsys, "baseline", "list", "--baselines", bl)
    assert rc == 0 and out.startswith("pp\t") and "Fake CPU" in out

    same = make_campaign(tmp_path / "same", data, 3, seed=2, job_sd=0.005)
    rc, out, _ = jostle(capsys, "baseline", "check", same, "--name", "pp", "--baselines", bl)
    assert rc == 0 and "no regression" in out
    slow = make_campaign(tmp_path / "slow", data, 3, factor=1.3, seed=3, job_sd=0.005)
    rc, out, _ = jostle(capsys, "baseline", "check", slow, "--name", "pp", "--baselines", bl,
                        "--format", "json")
    got = json.loads(out)
    assert rc == 1 and got["counts"]["slower"] > 0 and got["counts"]["faster"] == 0


def test_check_refuses_what_it_cannot_compare(tmp_path, data, capsys):
    ref = make_campaign(tmp_path / "ref", data, 1)
    bl = tmp_path / "baselines"
    jostle(capsys, "baseline", "save", ref, "--name", "pp", "--baselines", bl)
    rc, out, err = jostle(capsys, "baseline", "check", ref, "--name", "other", "--baselines", bl)
    assert rc == 2 and "no baseline 'other'" in err
    other = make_campaign(tmp_path / "other", data, 1)
    for f in other.glob("*.jsonl"):
        f.write_text(f.read_text().replace('"cores": 24', '"cores": 48'))
    rc, out, err = jostle(capsys, "baseline", "check", other, "--name", "pp", "--baselines", bl)
    assert rc == 2 and "no entry for this machine" in err and "24 cores" in err
    rc, _, err = jostle(capsys, "baseline", "save", tmp_path / "nowhere", "--baselines", bl)
    assert rc == 2 and "does not exist" in err


@pytest.mark.pages
def test_report_has_the_comparison_section(tmp_path, data, capsys):
    a = make_campaign(tmp_path / "a", data, 2, seed=1)
    b = make_campaign(tmp_path / "b", data, 2, factor=1.3, seed=2)
    rc, out, _ = jostle(capsys, "report", b, "--compare", a, "-o", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert rc == 0 and 'id="comparison"' in page and "slower than the reference" in page
    assert 'id="compare-pingpong"' in page and "Benjamini-Hochberg" in page
