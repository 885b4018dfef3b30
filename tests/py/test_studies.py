"""The studies: each is planned in studies/ (typed settings, no argparse) and each study command
ends in the one campaign tail, commands/_common.run_campaign, which it is handed the runs."""
import ast
from pathlib import Path

import pytest

from conftest import run_cli
from jostle.commands import _common

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "jostle"
# each study command, as a user plans it (--dry-run: the tail prints the plan, launches nothing)
COMMANDS = {
    "pingpong": ["pingpong", "--sizes", "8,1K"],
    "contention": ["contention", "fig1", "--quick"],
    "nuioa": ["nuioa", "--quick"],
    "overlap": ["overlap", "--quick", "--ranks", "2"],
    "bcast": ["bcast", "--sizes", "8"],
    "cholesky": ["cholesky"],
    "model": ["model", "calibrate", "--quick"],
}
SIMULATED = {"bcast": ["bcast", "--simulate", "--nodes", "4,8"],
             "cholesky": ["cholesky", "--simulate", "--nodes", "4"]}


@pytest.mark.parametrize("study,argv", [*sorted(COMMANDS.items()),
                                        *((f"{k} simulated", v) for k, v in SIMULATED.items())])
def test_every_study_command_ends_in_the_one_tail(study, argv, capsys, monkeypatch, tmp_path,
                                                  built):
    built("simgrid" if "simulated" in study else "openmpi")
    handed = []

    def tail(args, runs, after=None, config=None, notes=(), jobs=1):
        handed.append(runs)
        return 0
    monkeypatch.setattr(_common, "run_campaign", tail)
    rc, _, err = run_cli(capsys, *argv, "--dry-run", "--output-dir", tmp_path)
    assert rc == 0, err
    assert len(handed) == 1 and handed[0], f"jostle {study} did not hand its runs to the tail"
    assert all(r.benchmark and r.args for r in handed[0])


def test_the_study_commands_plan_nothing_themselves():
    """No command module defines a plan, nor starts a Campaign but through a `jostle run` step:
    the plans are in studies/, the end in the tail."""
    for name in COMMANDS:
        tree = ast.parse((PACKAGE / "commands" / f"{name}.py").read_text())
        defs = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert not {d for d in defs if d == "plan" or d.startswith("plan_")}, name
        assert (PACKAGE / "studies" / f"{name}.py").is_file(), name
        runs = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute) and n.func.attr in ("run", "dry_run")
                and ast.unparse(n.func.value).startswith("camp")]
        owners = {f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
                  for n in runs if f.lineno <= n.lineno <= (f.end_lineno or 0)}
        assert owners <= {"step_contention", "step_overlap", "kernel_rates"}, (name, owners)
    sim = (PACKAGE / "run" / "simgrid.py").read_text()   # simulated sweeps: planned, not run
    assert ".run(" not in sim and ".dry_run(" not in sim


def test_scan_is_planned_in_studies():
    """`jostle scan` runs, judges and reports in commands/; what it measures (each node's
    fingerprint, the link run and its rounds, the time bound) is studies/scan.py's, from typed
    settings."""
    from jostle.studies import scan as study
    planning = {"fingerprint_runs", "per_host", "choose_shifts", "check_shifts", "shifts_of",
                "arrange_rounds", "link_run", "time_bound", "shift_text"}
    for name in ("scan", "_scan_runs", "_scan_sim", "_scan_report"):
        tree = ast.parse((PACKAGE / "commands" / f"{name}.py").read_text())
        defs = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert not defs & planning, (name, defs & planning)
    s = study.Settings(budget=10.0, shifts=2)
    assert [r.name for r in study.fingerprint_runs(s, ["n1"])] == [
        "fp-pingpong-n1", "fp-memlat-n1", "fp-contention-n1"]
    shifts = study.shifts_of(s, 8)
    run = study.link_run(s, [f"n{i}" for i in range(8)], shifts=shifts)
    assert run.benchmark == "shift" and run.args[run.args.index("--shifts") + 1] == \
        ",".join(map(str, shifts))
