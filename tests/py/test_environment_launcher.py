"""The environment table (rules.environments, the report's machine section): what a launcher
sets by itself (mpirun's OMPI_MCA_* of its own options, PSM2_DEVICES, Hydra's interface host
name) is told apart from the user's settings and never listed as a difference between the
runs of two launchers; a setting the user changed still is."""

import json

import pytest

from jostle import report
from jostle.analysis import rules
from jostle.records.results import load

pytestmark = pytest.mark.unit

OMPI = {"OMPI_MCA_hwloc_base_binding_policy": "none", "OMPI_MCA_mpi_oversubscribe": "0",
        "PSM2_DEVICES": "self,shm"}
MPICH = {"MPIR_CVAR_CH3_INTERFACE_HOSTNAME": "vm"}


def campaign(folder, data, runs):
    """RUNS: {name: (library, variables)}, each a copy of the data file's intra-node run."""
    folder.mkdir()
    lines = (data / "pingpong_intra.jsonl").read_text().splitlines()
    for name, (library, variables) in runs.items():
        meta = json.loads(lines[0])
        meta["mpi"]["library"] = library
        meta["environment"] = {"variables": variables, "thp": "madvise"}
        (folder / f"{name}.jsonl").write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n")
    return load([folder])


def test_launcher_variables_are_not_differences(tmp_path, data):
    runs = campaign(tmp_path / "c", data, {"ompi": ("Open MPI v4.1.4", OMPI),
                                            "mpich": ("MPICH Version:\t4.0.2", MPICH)})
    env = rules.environments(runs)
    assert env["differs"] == [] and ("thp", "madvise") in env["common"]
    got = {(k, v, by) for k, v, by, _ in env["launcher"]}
    assert ("PSM2_DEVICES", "self,shm", "mpirun (Open MPI)") in got
    assert ("MPIR_CVAR_CH3_INTERFACE_HOSTNAME", "vm", "mpiexec (MPICH Hydra)") in got
    assert len(got) == 4
    shown = report._environment(runs)   # what the report's machine section draws
    assert shown["differs"] is None and len(shown["launcher"]["rows"]) == 4


def test_a_users_setting_still_differs(tmp_path, data):
    runs = campaign(tmp_path / "c", data, {
        "a": ("Open MPI v4.1.4", {**OMPI, "OMPI_MCA_btl": "self,vader"}),
        "b": ("Open MPI v4.1.4", {**OMPI, "OMPI_MCA_btl": "self,tcp"})})
    env = rules.environments(runs)
    assert {(k, v) for k, v, _ in env["differs"]} == {("OMPI_MCA_btl", "self,vader"),
                                                      ("OMPI_MCA_btl", "self,tcp")}
    assert rules.set_by_launcher("OMPI_MCA_orte_ess_jobid") == "mpirun (Open MPI)"
    assert rules.set_by_launcher("OMPI_MCA_btl") == ""
