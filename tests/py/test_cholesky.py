"""The cholesky benchmark: 2 and 4 real ranks (Open MPI, oversubscribed) with the residual
checked, a wrong factorization (a TRSM kernel made wrong by an LD_PRELOAD shim) failing with
exit 1 and a .partial run file, bad input (exit 2 with a clear message), a small SimGrid run,
the command's plan and the figure/report hooks.  No assertion on machine speed."""
import shutil
import subprocess
import sys

import pytest

from jostle import report
from jostle.figures import cholesky as fig
from jostle.records.results import load_run
from mpijobs import ENV, launcher, run_bench, validate

pytestmark = pytest.mark.mpi
QUICK = ["--min-reps", "2", "--max-time", "0.05", "--warmup", "0"]


def chol(tmp_path, *args, np=2, name="c.jsonl", flavor="openmpi"):
    out = tmp_path / name
    return run_bench("cholesky", *args, out=out, n=np, flavor=flavor, timeout=240), out


@pytest.mark.parametrize("np,grid", [(2, "1x2"), (4, "2x2")])
def test_real_ranks_factorize_and_check(tmp_path, np, grid):
    p, out = chol(tmp_path, *QUICK, "--n", "384", "--tile", "64", "--grid", grid, np=np)
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    df = r.points
    assert set(df["mode"]) == {"flat", "flat-ordered", "dbcast"}
    assert set(df["metric"]) == {"gflops", "time", "residual"}
    assert (df[df["metric"] == "residual"]["median"] < 1e-13).all()
    assert (df[df["metric"] == "gflops"]["median"] > 0).all()
    c = r.meta["cholesky"]
    assert c["residual_bound"] == 10    # on ||A - L L^T||_F / (||A||_F N eps): ~1e-3 here
    assert c["tiles"] == 6 and (c["grid_p"], c["grid_q"]) == tuple(map(int, grid.split("x")))
    if np == 4:
        assert c["tiles_broadcast"] > 0     # a 2x2 grid has tiles needed by two ranks
    # The communication thread and every worker are bound and recorded, per rank.
    for k in range(np):
        b = r.meta["binding"][str(k)]
        assert "core" in b["comm"] and len(b["compute"]) == c["workers"]


@pytest.mark.parametrize("datatype,eps", [("double", 2.220446e-16), ("float", 1.1920929e-07)])
def test_flat_ordered_real_run(tmp_path, datatype, eps):
    """flat-ordered alone on 2 real ranks, N 512, tile 128: a factorization that checks, in a
    record that names the mode and the datatype (float: the arithmetic of StarPU-MPI's
    mpi_cholesky, its residual judged against FLT_EPSILON)."""
    p, out = chol(tmp_path, *QUICK, "--n", "512", "--tile", "128", "--modes", "flat-ordered",
                  "--datatype", datatype)
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    df = r.points
    assert set(df["mode"]) == {"flat-ordered"} and set(df["routing"]) == {"flat"}
    assert set(df["datatype"]) == {datatype} and r.meta["cholesky"]["datatype"] == datatype
    res = df[df["metric"] == "residual"]["median"]
    assert len(res) == 1 and 0 < res.iloc[0] <= 10 * 512 * eps
    assert (df[df["metric"] == "gflops"]["median"] > 0).all()


@pytest.mark.parametrize("args,msg", [
    (["--modes", "flat,orderd"], "--modes: 'orderd' is not a mode; expected a list of flat, "
                                 "flat-ordered and dbcast"),
    (["--datatype", "half"], "--datatype 'half'"),
])
@pytest.mark.unit
@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_bad_mode_or_datatype_exits_2(tmp_path, args, msg, jostle_cli, flavor):
    """Refused before MPI starts (--validate: no launch), by the bench and by the command."""
    out = tmp_path / "c.jsonl"
    p = validate("cholesky", *QUICK, "--n", "256", "--tile", "128", *args, "--output", out,
                 flavor=flavor)
    assert p.returncode == 2, p.stderr
    assert msg in p.stderr
    assert not out.exists()
    cli = jostle_cli("cholesky", *args, "--dry-run", env=ENV)
    assert cli.returncode == 2
    assert ("'orderd' is not a mode" if "--modes" in args else "'half'") in cli.stderr


# cblas_dtrsm interposed: the real one, then L(m,k)[0,0] += 1, so the factor is wrong while
# everything else (POTRF, the updates, the residual's own dsyrk) is the real library.
WRONG_TRSM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
typedef void (*trsm_fn)(int, int, int, int, int, int, int, double, const double *, int,
                        double *, int);
static trsm_fn real;
__attribute__((constructor)) static void init(void)
{
    real = (trsm_fn)dlsym(RTLD_NEXT, "cblas_dtrsm");
}
void cblas_dtrsm(int o, int s, int u, int t, int d, int m, int n, double alpha,
                 const double *a, int lda, double *b, int ldb)
{
    real(o, s, u, t, d, m, n, alpha, a, lda, b, ldb);
    b[0] += 1.0;
}
"""


def test_wrong_factorization_fails(tmp_path, built):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler for the LD_PRELOAD shim")
    src, so, out = tmp_path / "wrong_trsm.c", tmp_path / "wrong_trsm.so", tmp_path / "c.jsonl"
    src.write_text(WRONG_TRSM)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(so), str(src), "-ldl"], check=True)
    cmd = launcher("openmpi", 2) + ["-x", f"LD_PRELOAD={so}", built(), "cholesky", *QUICK,
                                    "--n", "384", "--tile", "64", "--grid", "1x2",
                                    "--output", str(out)]
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=240)
    assert p.returncode == 1, p.stderr    # jt_fatal: not 0, not 2 (bad input)
    assert "the factorization is wrong" in p.stderr, p.stderr
    assert "above the bound 10 (N 384, tile 64, grid 1x2)" in p.stderr
    assert not out.exists()               # no complete result: the run file stays .partial
    partial = out.with_name(out.name + ".partial")
    assert partial.exists() and '"type":"end"' not in partial.read_text()


@pytest.mark.unit
@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_a_tile_that_does_not_divide_exits_2(tmp_path, flavor):
    """Refused before MPI starts (--validate: no launch)."""
    out = tmp_path / "c.jsonl"
    p = validate("cholesky", *QUICK, "--n", "500", "--tile", "64", "--output", out,
                 flavor=flavor)
    assert p.returncode == 2, p.stderr
    assert "--tile 64 does not divide --n 500" in p.stderr
    assert not out.exists()


# Refused once the ranks are known (the grid against the job) or the matrix is factorized:
# real launches, the grid with each library.
@pytest.mark.parametrize("args,msg,flavor", [
    (["--grid", "3x1"], "--grid 3x1 does not match the job", "openmpi"),
    (["--grid", "3x1"], "--grid 3x1 does not match the job", "mpich"),
    (["--n", "256", "--tile", "64", "--matrix", "nonspd"],
     "not positive definite: POTRF of diagonal tile (2,2)", "openmpi"),
])
def test_bad_input_exits_2(tmp_path, args, msg, flavor):
    p, out = chol(tmp_path, *QUICK, *args, np=4, flavor=flavor)
    assert p.returncode == 2, p.stderr
    assert msg in p.stderr
    assert not out.exists()


def test_small_smpi_run(tmp_path, jostle_cli, built):
    built("simgrid")
    p = jostle_cli("cholesky", "--simulate", "--nodes", "4", "--n", "2048", "--tile", "256",
                   "--cores-per-node", "2", "--speed", "50Gf", "--output-dir", tmp_path,
                   "--campaign", "s", "--quiet", env=ENV)
    assert p.returncode == 0, p.stderr
    r = load_run(tmp_path / "s" / "cholesky-sim-4.jsonl")
    assert set(r.points["mode"]) == {"flat", "flat-ordered", "dbcast"}
    assert r.meta["cholesky"]["simulated"] is True
    sim = r.meta["simulated"]   # what SimGrid says the simulated nodes are
    assert sim["platform_hosts"] == 4 and sim["host_speed_flops"] == pytest.approx(50e9)
    assert sim["host_cores"] == 2 and r.meta["cholesky"]["workers"] == 2   # a worker per core
    assert sim["route_bandwidth_Bps"] == pytest.approx(10e9 / 8)
    gains = fig._gains(fig._frame([r]))
    assert len(gains) == 1 and gains[0]["nodes"] == 4 and gains[0]["n"] == 2048
    assert "nodes of 2 × 50 GFlop/s cores, 10 Gbit/s" in gains[0]["platform"]
    html = report.render([r])
    assert 'id="cholesky-summary"' in html


def test_starpu_reference_recorded_beside_jostle(tmp_path, jostle_cli):
    from jostle.run import starpu
    if not starpu.MPI_CHOLESKY.is_file():
        pytest.skip(f"{starpu.MPI_CHOLESKY} (starpu-examples) is not installed")
    p = jostle_cli("cholesky", "--n", "512", "--tile", "128", "--workers", "1", "--min-reps", "2",
                   "--max-time", "0.05", "--starpu", "--starpu-reps", "2", "--output-dir",
                   tmp_path, "--campaign", "c", "--name", "t", "--quiet", env=ENV)
    assert p.returncode == 0, p.stderr
    ref = load_run(tmp_path / "c" / "t-starpu.jsonl")
    pt = ref.points.iloc[0]
    assert ref.benchmark == "cholesky" and pt["mode"] == "starpu" and pt["n"] == 2
    assert pt["median"] > 0 and pt["order"] == 512 and pt["tile"] == 128
    assert "mpi_cholesky" in " ".join(ref.meta["argv"])
    launches = ref.samples(ref.points.index[0])   # each launch's rate, kept beside the record
    assert len(launches) == 2 and min(launches) <= pt["median"] <= max(launches)
    table = fig.tables([load_run(tmp_path / "c" / "t.jsonl"), ref])[0]
    col = table["headers"].index("StarPU-MPI GFlop/s")
    assert table["rows"][0][col] == pytest.approx(pt["median"], abs=0.006)  # rounded to 0.01


@pytest.mark.slow
def test_kernel_rates_measured_and_simulated(tmp_path, jostle_cli, built):
    out = tmp_path / "tk.jsonl"
    p = run_bench("tile-kernels", "--tile", "64", "--min-reps", "5", "--max-time", "0.05",
                  out=out, n=1)
    assert p.returncode == 0, p.stderr
    pts = load_run(out).points
    g = pts[pts["metric"] == "gflops"].set_index("kernel")["median"]
    assert set(g.index) == {"POTRF", "TRSM", "SYRK", "GEMM"} and (g > 0).all()
    bad = run_bench("tile-kernels", "--tile", "0", out=tmp_path / "bad.jsonl", n=1)
    assert bad.returncode == 2 and "--tile '0' is not allowed" in bad.stderr
    p, _ = chol(tmp_path, *QUICK, "--kernel-rates", "potrf=1,trsm=1,syrk=1,gemm=1")
    assert p.returncode == 2 and "for simulated runs" in p.stderr
    built("simgrid")
    # Kernels at 2 GFlop/s on one-core nodes: 4 nodes cannot exceed 8 GFlop/s, whatever the
    # node speed (100 Gf by default).
    p = jostle_cli("cholesky", "--simulate", "--nodes", "4", "--n", "1024", "--tile", "256",
                   "--kernel-rates", "potrf=2,trsm=2,syrk=2,gemm=2", "--output-dir", tmp_path,
                   "--campaign", "k", "--quiet", env=ENV)
    assert p.returncode == 0, p.stderr
    r = load_run(tmp_path / "k" / "cholesky-sim-4.jsonl")
    g = r.points[r.points["metric"] == "gflops"]["median"]
    assert (g <= 8 * 1.001).all() and (g > 1).all()
    assert r.meta["cholesky"]["kernel_rates_gflops"]["GEMM"] == 2
    assert "kernel rates given (GEMM 2 GFlop/s)" in fig._platform(r.meta)
    # Measured rates are kept with the campaign: resuming it does not measure (and refuse) anew;
    # another platform under the same names is refused.
    sweep = ["cholesky", "--simulate", "--nodes", "4", "--n", "512", "--tile", "128",
             "--kernel-rates", "measure", "--output-dir", tmp_path, "--campaign", "m"]
    for _ in range(2):
        p = jostle_cli(*sweep, env=ENV)
        assert p.returncode == 0, p.stderr
    assert "tile-kernels-128.jsonl" in p.stderr and p.stderr.count("already complete") == 2
    p = jostle_cli(*sweep, "--speed", "50Gf", env=ENV)
    assert p.returncode == 2 and "simulated on another platform" in p.stderr
    p = jostle_cli("cholesky", "--simulate", "--nodes", "4", "--kernel-rates", "gemm=2",
                   "--output-dir", tmp_path, "--campaign", "k2", "--quiet", env=ENV)
    assert p.returncode == 2 and "give all of potrf, trsm, syrk, gemm" in p.stderr


@pytest.mark.unit
def test_cli_plan_and_bad_grid(tmp_path, jostle_cli):
    run = lambda *a: jostle_cli("cholesky", *a, env=ENV)
    p = run("--ranks", "4", "--grid", "2x3")
    assert p.returncode == 2 and "does not match --ranks 4" in p.stderr
    p = run("--n", "1000", "--tile", "64", "--dry-run")
    assert p.returncode == 2 and "does not divide" in p.stderr
    p = run("--simulate", "--nodes", "4,8", "--dry-run", "--output-dir", str(tmp_path),
            "--bench", sys.executable)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("smpirun -np") == 2 and "--routing binomial" in p.stdout
    # SMPI's growing test sleeps would stall the polling loop (docs/cholesky.md): off.
    assert p.stdout.count("--cfg=smpi/grow-injected-times:no") == 2
