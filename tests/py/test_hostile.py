"""Hostile command lines over every subcommand: bad numbers, empty and unicode values, paths
that cannot be written, traversal, newlines and shell characters in every value that reaches a
script or a file name. Each is refused with exit status 2 and one line naming the value, no
traceback, and no file written (the command runs in an empty directory that must stay so)."""

import contextlib
import io
import os

import pytest

from jostle import binary, cli
from jostle.run import bench_query
from jostle.errors import JostleError

pytestmark = pytest.mark.unit

NL = "a\nb"
SHELL = "a;touch X"
TRAVERSAL = "../../../etc"
UNICODE = "ｆｉｌｅ\u202e"      # full-width letters and a right-to-left override
BAD_COUNTS = ["-1", "0", "abc", "", "1.5", "1e999", "nan"]
BAD_FLOATS = ["-1", "abc", "", "inf", "nan", "1e999"]
HUGE = "99999999999999999999"
# Refused by jostle-bench's own checks, asked before anything launches (--validate, issue 25):
# checked where the built bench has the mode.
VALIDATE = "validate"

SUBMIT = ["submit", "--dry-run", "--time", "5"]


def _cases():
    c = []

    def add(argv, needle, status=2):
        c.append(pytest.param(argv, needle, 2, marks=pytest.mark.skipif(
            not _can_validate(), reason="the built jostle-bench has no --validate yet"))
            if status == VALIDATE else (argv, needle, status))

    # submit: every value that reaches the #SBATCH lines or the script
    for v in (NL, "a b", "a\rb", "a\x00b", "a\"b", "a'b", "a`id`", "$(id)", "", "ü", SHELL):
        add(["submit", "--dry-run", "--time", "5", "--partition", v, "pingpong"], None)
        add(["submit", "--dry-run", "--time", "5", "--account", v, "pingpong"], None)
    for v in ("-1", "", "abc", "99:99:99", "1-24", "1:60", "5\n", "1-2:60:00", "٣"):
        add(["submit", "--dry-run", "--time", v, "pingpong"], v.strip() or "''")
    for v in BAD_COUNTS[:4]:
        add(SUBMIT + ["--nodes", v, "pingpong"], v or "''")
    add(SUBMIT + ["nosuch"], "nosuch")
    add(SUBMIT + ["pingpong", "--sizes", "-1"], "-1")
    add(SUBMIT + ["pingpong", "--campaign", NL], None)
    add(SUBMIT + ["pingpong", "--campaign", TRAVERSAL], TRAVERSAL)
    add(SUBMIT + ["pingpong", "--output-dir", "/proc/nope"], "/proc/nope")
    add(SUBMIT + ["contention", "fig1", "--max-cores", "99999"], "99999")
    add(SUBMIT + ["cholesky", "--sizes", "all,all"], "--sizes")
    add(SUBMIT + ["pingpong", "--comm-core", "99"], "99", VALIDATE)

    # pingpong (--dry-run: nothing may launch)
    pp = ["pingpong", "--dry-run"]
    for v in ["-1", "", "abc", "1:0", "0:1K:0", "1G:1K", "1Q", "١", HUGE, ","]:
        add(pp + ["--sizes", v], v or "''")
    for opt in ("--min-reps", "--max-reps", "--warmup", "--window"):
        for v in ("-1", "abc", ""):
            add(pp + [opt, v], v or "''")
    for opt in ("--max-time", "--precision", "--timeout"):
        for v in BAD_FLOATS:
            add(pp + [opt, v], v or "''")
    for v in ("1", "0", "abc", HUGE):
        add(pp + ["--ranks", v], v)
    for v in (",", "a,,b", " ", NL):
        add(pp + ["--hosts", v], None)
    for v in (NL, SHELL, TRAVERSAL, "", ".hidden", "a/b", UNICODE):
        add(pp + ["--name", v], None)
    for v in (NL, TRAVERSAL, "", "a/../../b", ".."):
        add(pp + ["--campaign", v], None)
    add(pp + ["--output-dir", "/proc/nope"], "/proc/nope")
    add(pp + ["--comm-core", "99"], "99", VALIDATE)
    add(pp + ["--comm-core", "-1"], "-1")
    add(pp + ["--comm-mem", "99"], "99", VALIDATE)
    add(pp + ["--comm-mem", "near,far,far,1"], "near,far,far,1")
    add(pp + ["--comm-core", "0,0,0"], "0,0,0")
    add(pp + ["--topology", "/nonexistent.xml"], "/nonexistent.xml", VALIDATE)
    add(pp + ["--mode", "nosuch"], "nosuch")
    add(pp + ["--buffers", "osu,osu"], "osu,osu")
    add(pp + ["--bench", "/nonexistent"], "/nonexistent")
    add(pp + ["--platform", "/nonexistent.xml"], "/nonexistent.xml")
    add(pp + ["--sizes"], "--sizes")
    add(pp + ["--name"], "--name")

    # contention
    for fig in ("fig1", "fig2"):
        f = ["contention", fig, "--dry-run"]
        for v in ("-1", "abc", "", "99999", HUGE):
            add(f + ["--max-cores", v], v or "''")
        for v in BAD_FLOATS:
            add(f + ["--phase-time", v], v or "''")
        add(f + ["--repeat", "0"], "0")
        add(f + ["--array-bytes", "-1"], "-1")
        add(f + ["--ai", "0"], "0")
        add(f + ["--ai", "nan"], "nan")
        add(f + ["--nic", "nosuch"], "nosuch", VALIDATE)
        add(f + ["--campaign", TRAVERSAL], TRAVERSAL)
        add(f + ["--campaign", ""], "''")
    f = ["contention", "fig1", "--dry-run"]
    add(f + ["--comm-core", "99"], "99", VALIDATE)
    add(f + ["--compute-mem", "99"], "99", VALIDATE)
    add(f + ["--comm-mem", "99"], "99", VALIDATE)
    add(["contention", "nosuch"], "nosuch")
    add(["contention", "fig3", "--dry-run", "--sizes", "-1"], "-1")
    add(["contention", "fig3", "--dry-run", "--cores", "abc"], "abc")

    # nuioa, overlap, bcast, cholesky
    add(["nuioa", "--dry-run", "--writers", "-1"], "-1")
    add(["nuioa", "--dry-run", "--sizes", ""], "''")
    for study in (["pingpong"], ["contention", "fig1"], ["nuioa"]):    # _common.check_hosts
        add([*study, "--dry-run", "--hosts", "a,b,c", "--ranks", "2"], "3 hosts")
    add(["nuioa", "--dry-run", "--parts", "nosuch"], "nosuch")
    add(["nuioa", "--dry-run", "--nic", "nosuch"], "nosuch")
    add(["nuioa", "--dry-run", "--campaign", NL], None)
    add(["overlap", "--dry-run", "--thread-core", "999"], "999", VALIDATE)
    add(["overlap", "--dry-run", "--ranks", "abc"], "abc")
    add(["overlap", "--dry-run", "--ranks", "0"], "0")
    add(["overlap", "--dry-run", "--collectives", "nosuch"], "nosuch")
    add(["overlap", "--dry-run", "--poll-us", "-1"], "-1")
    add(["overlap", "--dry-run", "--batch", "0"], "0")
    add(["overlap", "--dry-run", "--sizes", "-1"], "-1")
    add(["bcast", "--dry-run", "--comm-mem", "near,far,far,1"], "--comm-mem")
    add(["bcast", "--dry-run", "--recipients", "-1"], "-1")
    add(["bcast", "--dry-run", "--routing", "nosuch"], "nosuch")
    add(["bcast", "--dry-run", "--segment", "abc"], "abc")
    add(["bcast", "--dry-run", "--ranks", "1"], "1")
    add(["bcast", "--dry-run", "--simulate", "--bandwidth", "-1Gbps"], "-1Gbps")
    add(["bcast", "--dry-run", "--simulate", "--latency", "abc"], "abc")
    add(["bcast", "--dry-run", "--simulate", "--nodes", "0"], "0")
    add(["bcast", "--dry-run", "--jobs", "0"], "0")
    add(["bcast", "--dry-run", "--name", NL], None)
    add(["cholesky", "--dry-run", "--sizes", "all,all"], "--sizes")
    add(["cholesky", "--dry-run", "--n", "-1"], "-1")
    add(["cholesky", "--dry-run", "--tile", "0"], "0")
    add(["cholesky", "--dry-run", "--grid", "0x1"], "0x1")
    add(["cholesky", "--dry-run", "--workers", "-1"], "-1")
    add(["cholesky", "--dry-run", "--simulate", "--speed", "abc"], "abc")
    add(["cholesky", "--dry-run", "--campaign", TRAVERSAL], TRAVERSAL)
    add(["cholesky", "--dry-run", "--simulate", "--kernel-rates", "garbage"], "garbage", VALIDATE)
    add(["cholesky", "--dry-run", "--simulate", "--kernel-rates", "potrf=1"], "potrf=1", VALIDATE)
    add(["cholesky", "--dry-run", "--starpu", "--starpu-bin", "/nonexistent"], "/nonexistent")
    add(["cholesky", "--dry-run", "--starpu-bin", "/etc/passwd"], "/etc/passwd")

    # run, machine, topo, place
    add(["run", "--dry-run", "--steps", "nosuch"], "nosuch")
    add(["run", "--dry-run", "--steps", ""], "''")
    add(["run", "--dry-run", "--campaign", TRAVERSAL], TRAVERSAL)
    add(["run", "--dry-run", "--campaign", NL], None)
    add(["run", "--dry-run", "--output-dir", "/proc/nope"], "/proc/nope")
    add(["run", "--dry-run", "--timeout", "-1"], "-1")
    add(["run", "--dry-run", "--mpi", "nosuch"], "nosuch")
    add(["run", "--dry-run", "--oversubscribe", "maybe"], "maybe")
    add(["machine", "--topology", "/nonexistent.xml"], "/nonexistent.xml")
    add(["machine", "--bench", "/nonexistent"], "/nonexistent")
    add(["topo", "--picture", "/proc/x.png"], "/proc/x.png")
    add(["topo", "--export", "/proc/x.xml"], "/proc/x.xml")
    add(["topo", "--graph", "g.png", "--matrix", "/nonexistent.csv"], "/nonexistent.csv")
    add(["topo", "--input", "/nonexistent.xml"], "/nonexistent.xml")
    add(["topo", "--rel-tol", "-1"], "-1")
    add(["topo", "--rel-tol", "nan"], "nan")
    add(["topo", "--bytes", "-1"], "-1")
    add(["place", "--threads", "-1"], "-1")
    add(["place", "--ranks", "abc"], "abc")
    add(["place", "--ranks", "5:2"], "5:2")
    add(["place", "--comm", "--nic", "nosuch"], "nosuch")
    add(["place", "--comm", "--topology", "/nonexistent.xml"], "/nonexistent.xml")
    add(["place", "--write-dir", "/proc/nope", "--comm"], "/proc/nope")

    # readers: report, plot, status, advise, model
    add(["report", "/nonexistent"], "/nonexistent")
    add(["report", ".", "-o", "/proc/x.html"], "/proc/x.html")
    add(["report", ".", "-o", "/nonexistent/x.html"], "/nonexistent")
    add(["plot", "/nonexistent"], "/nonexistent")
    add(["plot", ".", "--format", "gif"], "gif")
    add(["plot", ".", "--format", ""], "''")
    add(["status", "/nonexistent"], "/nonexistent")
    add(["status", "."], ".")
    add(["advise", "/nonexistent"], "/nonexistent")
    add(["model", "fit", "/nonexistent"], "/nonexistent")
    add(["model", "predict", "/nonexistent", "--cores", "-1"], "-1")
    add(["model", "nosuch"], "nosuch")
    add(["compare", "/nonexistent", "/nonexistent2"], "/nonexistent")
    add(["baseline", "nosuch"], "nosuch")
    add(["scan", "--nosuch"], "--nosuch")
    add(["nosuch"], "nosuch")
    add(["pingpong", "--nosuch"], "--nosuch")
    return c


def _can_validate():
    try:
        return bench_query.can_validate(binary.find_bench())
    except JostleError:
        return False


CASES = _cases()
ARGVS = [c.values[0] if hasattr(c, "values") else c[0] for c in CASES]


def test_there_are_enough_hostile_lines():
    assert len(CASES) >= 150
    commands = {a[0] for a in ARGVS}
    assert {"run", "machine", "topo", "place", "pingpong", "contention", "model", "advise",
            "nuioa", "overlap", "bcast", "plot", "cholesky", "report", "submit",
            "status"} <= commands


def _files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("argv, needle, status", CASES,
                         ids=[ascii(" ".join(a))[1:-1][:70] for a in ARGVS])
def test_hostile_line_is_refused_in_one_line(tmp_path, monkeypatch, argv, needle, status):
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = cli.main(argv)
        except SystemExit as e:
            rc = e.code
    text = err.getvalue()
    assert rc == status, f"exit {rc}: {text}"
    assert "Traceback" not in text
    assert text.endswith("\n") and text.count("\n") == 1, f"not one line: {text!r}"
    if needle is not None:
        shown = needle if needle != "''" else "''"
        assert shown in text or ascii(needle)[1:-1] in text, f"{needle!r} not named: {text}"
    else:   # a value with a newline or a control character: named escaped, on one line
        bad = next(a for a in argv if any(ch in a for ch in "\n\r\x00\"'`$; ") or a == ""
                   or not a.isascii()) if any(
            any(ch in a for ch in "\n\r\x00\"'`$; ") or a == "" or not a.isascii()
            for a in argv) else None
        assert bad is None or ascii(bad)[1:-1] in text or bad in text or "''" in text, text
    assert _files(tmp_path) == [], "a refused command wrote files"
    assert not os.path.exists("X")


@pytest.mark.mpi
@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_a_usage_error_of_the_ranks_is_said_once_without_mpi_noise(tmp_path, flavor, built,
                                                                     jostle_cli):
    """--comm-core 99 on a host without core 99: refused (by jostle-bench, before or after MPI
    starts) in one error line, without the MPI library's abort output, and no record."""
    from mpijobs import ENV
    built(flavor)
    r = jostle_cli("pingpong", "--sizes", "4", "--comm-core", "99", "--mpi", flavor,
                   "--output-dir", tmp_path, env={k: v for k, v in ENV.items() if "OMPI" in k})
    assert r.returncode == 2, r.stderr
    errors = [x for x in r.stderr.splitlines() if "error" in x.lower()]
    assert len(errors) == 1 and errors[0].startswith("jostle: error: ") and "'99'" in errors[0], \
        r.stderr
    assert "-----" not in r.stderr and "BAD TERMINATION" not in r.stderr and "Traceback" not in \
        r.stderr, r.stderr
    assert not list(tmp_path.rglob("*.jsonl*"))
