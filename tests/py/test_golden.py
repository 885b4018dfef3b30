"""Every golden file of the tree (scripts/golden.py: describe.json, cli_options.json, the
generated topologies) is what makes it; after a change that is meant, `make golden`."""
import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("golden", ROOT / "scripts" / "golden.py")
golden = importlib.util.module_from_spec(spec)
spec.loader.exec_module(golden)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("name", sorted(golden.GOLDEN))
def test_each_golden_file_is_what_makes_it(name, built):
    if name == "describe":
        built("openmpi")
    assert golden.stale(name) == [], f"stale golden files ({name}): run `make golden`"


def test_the_driver_names_a_stale_file_and_rewrites_it(tmp_path, monkeypatch, capsys):
    (tmp_path / "share").mkdir()
    shutil.copytree(ROOT / "share" / "topologies", tmp_path / "share" / "topologies")
    henri = tmp_path / "share" / "topologies" / "henri.xml"
    henri.write_text(henri.read_text().replace('nbobjs="', 'nbobjs="1', 1))
    (tmp_path / "share" / "topologies" / "memonly-numa.xml").unlink()
    monkeypatch.setattr(golden, "ROOT", tmp_path)
    assert golden.main(["topologies"]) == 1
    out = capsys.readouterr().out
    assert "henri.xml differs" in out and "memonly-numa.xml differs" in out
    assert golden.main(["--update", "topologies"]) == 0
    assert henri.read_text() == (ROOT / "share" / "topologies" / "henri.xml").read_text()
    assert golden.main(["topologies"]) == 0
