"""The transport settings a campaign of Open MPI launches asks once and hands to each launch
(jostle.run.transport, $JOSTLE_TRANSPORT), and the PSM MTLs left out where their device is
absent: what each launch records is what the launch would have said by itself."""
import json
import shlex
import subprocess

import pytest

from jostle.cli import main
from jostle.records.results import load_run
from jostle.run import transport

from mpijobs import ENV, launcher


@pytest.fixture
def devices(tmp_path, monkeypatch):
    """psm's device absent, psm2's present (a file standing for /dev/hfi1_0)."""
    (tmp_path / "hfi1_0").write_text("")
    monkeypatch.setattr(transport, "DEVICES", {"psm": str(tmp_path / "ipath*"),
                                               "psm2": str(tmp_path / "hfi1*")})


@pytest.mark.unit
@pytest.mark.parametrize("mtl, want", [
    ("^ofi", "^ofi,psm"),       # an exclusion: the MTL without its device added
    ("", "^psm"),               # every MTL: the same
    ("^psm,ofi", None),         # already out
    ("psm2", None),             # an include list is the user's choice
])
def test_an_mtl_without_its_device_is_left_out_where_the_setting_excludes(devices, mtl, want):
    mca, env = transport.handed({"pml": "^ucx", "mtl": mtl})
    assert mca == (["mtl", want] if want else [])
    assert json.loads(env["JOSTLE_TRANSPORT"]) == {"pml": "^ucx", "mtl": want or mtl}


@pytest.mark.unit
def test_nothing_is_handed_without_an_answer_nor_an_mtl_added_to_mpich():
    assert transport.handed(None) == ([], {})
    mca, env = transport.handed({"MPIR_CVAR_CH4_NETMOD": ""})
    assert mca == [] and json.loads(env["JOSTLE_TRANSPORT"]) == {"MPIR_CVAR_CH4_NETMOD": ""}


@pytest.mark.mpi
def test_the_bench_records_the_settings_it_is_handed(tmp_path, built):
    out = tmp_path / "r.jsonl"
    cmd = launcher("openmpi", 2) + [str(built()), "pingpong", "--sizes", "1", "--min-reps",
                                    "10", "--max-time", "0.05", "--output", str(out)]
    env = dict(ENV, JOSTLE_TRANSPORT='{"pml":"handed"}')
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert load_run(out).meta["mpi"]["transport"] == {"pml": "handed"}


@pytest.mark.mpi
def test_each_launch_records_what_its_own_line_would_have_said(tmp_path, capsys, monkeypatch,
                                                                built):
    """Two launches of a ping-pong: each records the settings asked once by the command, and
    the same launch line asking for itself (no $JOSTLE_TRANSPORT) says the same."""
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("JOSTLE_BENCH", raising=False)
    monkeypatch.delenv("JOSTLE_TRANSPORT", raising=False)
    rc = main(["pingpong", "--mpi", "openmpi", "--bench", str(built()), "--sizes", "1",
               "--min-reps", "10", "--max-time", "0.05", "--runs", "2", "--output-dir",
               str(tmp_path), "--campaign", "c", "--name", "t", "--timeout", "120"])
    assert rc == 0, capsys.readouterr().err
    metas = [load_run(tmp_path / "c" / f"t-r{k}.jsonl").meta for k in (1, 2)]
    assert metas[0]["mpi"]["transport"] == metas[1]["mpi"]["transport"]
    line = shlex.split(metas[0]["launch_line"])
    out = tmp_path / "alone.jsonl"
    line[line.index("--output") + 1] = str(out)
    p = subprocess.run(line, env=ENV, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert load_run(out).meta["mpi"]["transport"] == metas[0]["mpi"]["transport"]


@pytest.mark.unit
def test_the_answer_is_kept_until_the_bench_or_the_mpi_environment_changes(tmp_path, monkeypatch):
    """A second command asks nothing (the query was 0.2-0.26 s of each invocation); a rebuilt
    bench, an MPI variable or an MCA parameter file changed asks again; a cache that cannot be
    written is no error."""
    calls = tmp_path / "calls"
    bench = tmp_path / "bench"
    bench.write_text(f'#!/bin/sh\necho x >> {calls}\necho \'{{"pml":"^ucx"}}\'\n')
    bench.chmod(0o755)
    conf = tmp_path / "mca-params.conf"
    conf.write_text("btl = ^openib\n")
    monkeypatch.setenv("JOSTLE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OMPI_MCA_mca_param_files", str(conf))

    def asked():
        got = transport.Query(bench).settings()
        assert got == {"pml": "^ucx"}
        return len(calls.read_text().split())

    assert asked() == 1 and asked() == 1
    monkeypatch.setenv("OMPI_MCA_btl", "self,vader")
    assert asked() == 2 and asked() == 2
    conf.write_text("btl = ^openib,tcp\n")
    assert asked() == 3
    bench.write_text(bench.read_text() + "# rebuilt\n")
    assert asked() == 4 and asked() == 4
    monkeypatch.setenv("JOSTLE_CACHE_DIR", str(calls / "cache"))   # under a file: unwritable
    assert asked() == 5 and asked() == 6 and not list(tmp_path.glob("**/*.tmp"))
