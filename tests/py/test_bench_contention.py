"""Integration: jostle-bench contention with 2 real ranks, small arrays and short phases.  The
assertions are about structure and arithmetic (phases present, bytes and flops per sweep, the
intensity executed, metrics of each phase, oversubscription marked), never machine speeds."""
import os

import pytest

from jostle.records.results import load_run

from mpijobs import run_bench, validate

pytestmark = pytest.mark.mpi
QUICK = ["--min-reps", "5", "--max-time", "0.05", "--phase-time", "0.05", "--warmup", "2",
         "--array-bytes", "3M", "--compute-cores", "1", "--oversubscribe"]


def contention(tmp_path, *args, name="c.jsonl"):
    out = tmp_path / name
    return run_bench("contention", *args, out=out), out


def test_phases_metrics_and_triad_arithmetic(tmp_path):
    p, out = contention(tmp_path, *QUICK, "--sizes", "4,64K")
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    k = r.meta["kernel"]
    n = (3 << 20) // 3 // 8                       # elements per array
    assert k["bytes_per_sweep"] == 24 * n         # read a, b; write c (STREAM convention)
    assert k["bytes_per_sweep_write_allocate"] == 32 * n
    assert k["flops_per_sweep"] == 2 * n and k["ai"] == pytest.approx(1 / 12)
    assert r.meta["phases"] == ["compute", "comm", "together"]
    df = r.points
    assert set(df["phase"]) == {"compute", "comm", "together"}
    by_phase = {ph: set(g["metric"]) for ph, g in df.groupby("phase")}
    assert by_phase["compute"] == {"compute_throughput", "compute_traffic", "compute_bandwidth",
                                   "compute_flops"} | (
        {"stalled_fraction"} if r.meta["counters"]["backend"] == "perf" else set())
    assert by_phase["comm"] == {"latency", "bandwidth", "rtt"}
    assert by_phase["together"] == by_phase["comm"] | by_phase["compute"]
    assert sorted(df["size"].unique()) == [4, 65536]
    # Flops and bytes come from the same sweeps: their ratio is the kernel's intensity.
    for _, g in df[df["phase"] != "comm"].groupby(["phase", "size"]):
        m = g.set_index("metric")["median"]
        assert m["compute_flops"] / m["compute_bandwidth"] == pytest.approx(1 / 12, rel=1e-6)
        # One aggregate per phase; the traffic adds the write-allocate reads of c (32 / 24).
        assert g.set_index("metric")["n"]["compute_throughput"] == 1
        assert m["compute_traffic"] / m["compute_throughput"] == pytest.approx(32 / 24, rel=1e-6)
    assert set(df["stores"]) == {"normal"} and k["stores"] == "normal"
    # 2 ranks x (1 comm + 1 compute) on this machine's cores: marked.
    assert any("oversubscribed" in w for w in r.meta["warnings"]) == (os.cpu_count() < 4)
    assert len(r.meta["binding"]["0"]["compute"]) == 1
    c = r.meta["counters"]
    assert c["backend"] in ("perf", "unavailable") and (c["backend"] == "perf" or c["reason"])


def test_intensity_is_the_one_executed(tmp_path):
    p, out = contention(tmp_path, *QUICK, "--ai", "1", "--phases", "compute")
    assert p.returncode == 0, p.stderr
    k = load_run(out).meta["kernel"]
    n = (3 << 20) // 3 // 8
    assert k["reps_per_element"] == 12 and k["flops_per_sweep"] == 24 * n
    assert k["ai"] == pytest.approx(1.0)
    p, out = contention(tmp_path, *QUICK, "--ai", "0.3", "--phases", "compute", name="b.jsonl")
    assert load_run(out).meta["kernel"]["ai"] == pytest.approx(4 / 12)  # 0.3*12 rounds to 4


@pytest.mark.parametrize("kernel,flops", [("copy", False), ("cg", True), ("gemm", True),
                                          ("cpu", True)])
def test_other_kernels(tmp_path, kernel, flops):
    p, out = contention(tmp_path, *QUICK, "--kernel", kernel, "--phases", "compute,together")
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    metrics = set(r.points[r.points["phase"] == "compute"]["metric"])
    assert ("compute_flops" in metrics) == flops
    assert ("compute_bandwidth" in metrics) == (kernel != "cpu")
    assert ("compute_throughput" in metrics) == (kernel != "cpu")
    k = r.meta["kernel"]
    if kernel == "copy":
        n = (3 << 20) // 2 // 8
        assert k["bytes_per_sweep"] == 16 * n and k["flops_per_sweep"] == 0
    if kernel == "gemm":
        n = int(((3 << 20) / 24) ** 0.5)
        assert k["flops_per_sweep"] == 2 * n ** 3


@pytest.mark.parametrize("kernel,per", [("copy", 16), ("triad", 24)])
def test_nt_stores_are_recorded_and_count_no_write_allocate(tmp_path, kernel, per):
    p, out = contention(tmp_path, *QUICK, "--kernel", kernel, "--stores", "nt", "--phases",
                        "compute,together")
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    k = r.meta["kernel"]
    n = (3 << 20) // (per // 8) // 8
    assert k["stores"] == "nt" and k["isa"] in ("avx2+fma", "sse2")
    assert k["bytes_per_sweep"] == k["bytes_per_sweep_write_allocate"] == per * n
    df = r.points
    assert set(df["stores"]) == {"nt"}
    for _, g in df.groupby("phase"):
        m = g.set_index("metric")["median"]
        assert m["compute_traffic"] == pytest.approx(m["compute_throughput"], rel=1e-6)
        assert m["compute_throughput"] > 0


def test_order_repeat_and_no_compute(tmp_path):
    p, out = contention(tmp_path, *QUICK, "--phases", "together,comm", "--repeat", "2")
    assert p.returncode == 0, p.stderr
    df = load_run(out).points
    seq = list(dict.fromkeys(zip(df["rep"], df["phase"])))
    assert seq == [(0, "together"), (0, "comm"), (1, "together"), (1, "comm")]
    p, out = contention(tmp_path, "--min-reps", "5", "--phase-time", "0.05", "--compute-on",
                        "none", name="none.jsonl")
    assert p.returncode == 0, p.stderr
    df = load_run(out).points
    assert set(df["metric"]) == {"latency", "bandwidth", "rtt"}
    assert "compute" not in set(df["phase"])


# Refused before MPI starts: judged through --validate (no launch), with both builds.
@pytest.mark.unit
@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
@pytest.mark.parametrize("args,needle", [
    (["--kernel", "fft"], "'fft'"),
    (["--ai", "0.05"], "'0.05'"),
    (["--kernel", "copy", "--ai", "1"], "triad only"),
    (["--compute-mem", "5"], "'5'"),
    (["--nic", "mlx5_9"], "'mlx5_9'"),
    (["--phases", "compute,sleep"], "'compute,sleep'"),
    (["--stores", "sometimes"], "'sometimes'"),
    (["--stores", "nt", "--kernel", "cg"], "'cg'"),
    (["--stores", "nt", "--ai", "1"], "--ai '1'"),
])
def test_bad_input_exit_2(tmp_path, flavor, args, needle):
    p = validate("contention", "--phase-time", "0.05", *args, "--output", tmp_path / "c.jsonl",
                 flavor=flavor)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert needle in p.stderr
    assert not list(tmp_path.iterdir())


# Refused once the ranks are known (the threads of every rank of a host against its cores, the
# arrays of every rank against its memory): real launches, each library.
@pytest.mark.parametrize("args,needle,flavor", [
    (["--compute-cores", "3"], "--oversubscribe", "openmpi"),
    (["--compute-cores", "3"], "--oversubscribe", "mpich"),
    (["--array-bytes", "1T", "--compute-cores", "1", "--oversubscribe"], "available", "openmpi"),
])
def test_bad_input_for_the_ranks_exit_2(tmp_path, args, needle, flavor):
    assert validate("contention", "--phase-time", "0.05", *args, flavor=flavor).returncode == 0
    out = tmp_path / "c.jsonl"
    p = run_bench("contention", "--phase-time", "0.05", *args, out=out, flavor=flavor)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert needle in p.stderr
    assert not list(tmp_path.iterdir())


def test_table_rows_match_their_header_with_no_compute_core(tmp_path):
    """Each row of the screen table has the columns of the header above it; a phase that
    measured nothing says '-' for its interval, not 'inf'."""
    p, _ = contention(tmp_path, "--compute-cores", "0", "--sizes", "4", "--min-reps", "5",
                      "--phase-time", "0.05", "--max-time", "0.05")
    assert p.returncode == 0, p.stderr
    header = None
    for line in p.stdout.splitlines():
        if line.startswith("# Phase/Size"):
            header = line[2:].split()
        elif header and not line.startswith("#"):
            assert len(line.split()) == len(header), (header, line)
    assert "inf" not in p.stdout and "compute/4" in p.stdout
