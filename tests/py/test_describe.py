"""`jostle-bench --describe` is the one source of the benchmarks' options and metrics: both
builds say the same, and it lists every benchmark of --list. The copy committed for machines
without a bench (python/jostle/describe.json) is a golden file (test_golden.py; after changing
a C descriptor, `make golden`)."""
import json
import subprocess

import pytest

from mpijobs import ROOT, built, validate

pytestmark = pytest.mark.unit
COPY = ROOT / "python/jostle/describe.json"


def describe(flavor):
    p = subprocess.run([built(flavor), "--describe"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_both_builds_describe_the_same_benchmarks():
    openmpi, mpich = describe("openmpi"), describe("mpich")
    for a, b in zip(openmpi["benchmarks"], mpich["benchmarks"]):  # the first difference, named
        assert a == b, f"{a['name']}: the MPICH build describes it otherwise"
    assert openmpi == mpich


def test_every_benchmark_of_list_with_what_python_needs():
    d = describe("openmpi")
    listed = subprocess.run([built("openmpi"), "--list"], capture_output=True, text=True,
                            timeout=60, check=True).stdout.split("\n")
    assert [b["name"] for b in d["benchmarks"]] == [ln.split()[0] for ln in listed if ln]
    assert d["schema"] == 1 and d["tool"] == "jostle-bench"
    common = {o["name"]: o for o in d["common"]["options"]}
    assert common["min-reps"]["default"] == "100" and common["warmup"]["default"] == "10"
    for b in d["benchmarks"]:
        assert b["min_ranks"] >= 1 and isinstance(b["simgrid"], bool)
        assert b["thread_level"] in ("single", "funneled", "serialized", "multiple")
        names = [o["name"] for o in b["options"]]
        assert len(set(names)) == len(names) and not set(names) & set(common), b["name"]
        for o in b["options"] + d["common"]["options"]:
            assert set(o) == {"name", "arg", "default", "choices", "help"}, o
            if o["choices"] is not None and o["default"] is not None:
                assert o["default"] in o["choices"], (b["name"], o["name"])
        assert b["metrics"], b["name"]
        for m in b["metrics"]:
            assert m["better"] in ("lower", "higher") and isinstance(m["unit"], str), m


def test_a_choice_outside_the_descriptor_is_refused_by_name():
    """The choices listed are those the bench checks (one table serves both)."""
    d = describe("openmpi")
    mode = next(o for o in next(b for b in d["benchmarks"] if b["name"] == "pingpong")["options"]
                if o["name"] == "mode")
    p = validate("pingpong", "--mode", "nosuch")
    assert p.returncode == 2
    assert ", ".join(mode["choices"]) in p.stderr and "'nosuch'" in p.stderr


# The Python side reads the description through jostle.records.benchmarks only, and makes the command
# line of every study from it: options, choices, defaults.

def test_lookups_read_the_committed_copy():
    from jostle.records import benchmarks
    assert benchmarks.describe() == json.loads(COPY.read_text())
    assert benchmarks.metric("pingpong", "latency")["better"] == "lower"
    assert benchmarks.metric("pingpong", "bandwidth")["better"] == "higher"
    assert benchmarks.default("bcast", "min-reps") == "100"        # a common option
    assert benchmarks.default("pingpong", "sizes") == "0:4M"       # the benchmark's own sizes
    assert benchmarks.default("cholesky", "sizes") is None
    assert benchmarks.choices("pingpong", "mode")[0] == "pingpong"
    for bad in (lambda: benchmarks.benchmark("nope"), lambda: benchmarks.option("pingpong", "x"),
                lambda: benchmarks.metric("pingpong", "gflops")):
        with pytest.raises(KeyError):
            bad()


def _subparser(command):
    from jostle.cli import build_parser
    p = build_parser()
    for word in command:
        p = next(a for a in p._actions if isinstance(getattr(a, "choices", None), dict)
                 and word in a.choices).choices[word]
    return p


@pytest.mark.parametrize("command, bench, name", [
    (["pingpong"], "pingpong", "mode"), (["pingpong"], "pingpong", "statistic"),
    (["contention", "fig1"], "contention", "kernel"),
    (["contention", "fig1"], "contention", "stores"), (["overlap"], "overlap", "thread-idle"),
    (["bcast"], "bcast", "progress-mode"), (["cholesky"], "cholesky", "routing"),
    (["cholesky"], "cholesky", "matrix"),
])
def test_the_cli_takes_its_choices_from_the_descriptor(command, bench, name):
    from jostle.records import benchmarks
    option = next(a for a in _subparser(command)._actions if "--" + name in a.option_strings)
    assert tuple(option.choices) == benchmarks.choices(bench, name)


def test_the_cli_shows_the_benchs_defaults_and_passes_only_what_is_given():
    from jostle.records import benchmarks
    p = _subparser(["pingpong"])
    text = " ".join(p.format_help().split())
    for name in ("min-reps", "warmup", "max-time", "precision", "sizes"):
        assert f"default {benchmarks.default('pingpong', name)}" in text, name
    args = p.parse_args([])
    assert args.min_reps is None and args.warmup is None   # jostle-bench applies its own


def test_a_runs_headline_takes_each_metric_at_its_best(tmp_path):
    """Latency at its smallest, bandwidth at its largest: the orientation is the descriptor's."""
    import pandas as pd
    from jostle.records.results import Run
    pts = pd.DataFrame({"metric": ["latency", "latency", "bandwidth", "bandwidth"],
                        "unit": ["us", "us", "MB/s", "MB/s"], "size": [4, 1024, 4, 1024],
                        "median": [0.5, 2.0, 8.0, 4000.0]})
    run = Run(tmp_path / "r.jsonl", {"benchmark": "pingpong"}, pts, None)
    assert run.headline == "latency 0.500 µs at 4 B, bandwidth 4.00 GB/s at 1 KiB"


def test_every_query_of_the_usage_is_answered_by_its_mode():
    """--help lists the queries from the one table that dispatches them (src/bench/main.c):
    each flag it shows is a mode, never an unknown benchmark."""
    bench = built("openmpi")
    shown = subprocess.run([bench, "--help"], capture_output=True, text=True, timeout=60,
                           check=True).stdout
    flags = [ln.split()[1] for ln in shown.splitlines() if ln.strip().startswith("jostle-bench --")]
    assert {"--list", "--version", "--describe", "--parse-sizes", "--stats", "--stream"} <= set(flags)
    for flag in flags:
        p = subprocess.run([bench, flag, "--no-such-option"], capture_output=True, text=True,
                           timeout=60, input="")
        assert "unknown benchmark" not in p.stderr, (flag, p.stderr)
