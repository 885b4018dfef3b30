"""Find jostle-bench, build the launcher command line, run it under a time-out.

Every launcher gets "no binding" from the launcher itself: jostle-bench binds
each of its threads and buffers through hwloc and records what it obtained, and
a launcher binding would fight with it (or silently confine it to one core).
"""

import copy
import functools
import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

from . import benchmarks
from .errors import Interrupted, JostleError, UsageError

LAUNCHERS = ("openmpi", "mpich", "srun", "smpirun", "generic", "custom")
# Executables tried for each launcher kind, most specific first: on Debian the bare
# `mpirun`/`mpiexec` are alternatives that may point at either MPI.
EXECUTABLES = {
    "openmpi": ("mpirun.openmpi", "mpiexec.openmpi", "mpirun"),
    "mpich": ("mpiexec.mpich", "mpiexec.hydra", "mpiexec"),
    "srun": ("srun",),
    "smpirun": ("smpirun",),
    "generic": ("mpiexec", "mpirun"),
}
_PROGRESS_PREFIX = "progress "
# srun starts ranks through a PMI plugin (--mpi=…); without one it takes the site's MpiDefault,
# often "none", under which MPI_Init fails. The plugins each MPI build can use, best first:
# Open MPI 4.x talks PMIx (Debian builds it without SLURM's PMI-1/2 libraries), MPICH's
# default client (Hydra's PMI) speaks the PMI-2 wire protocol of srun's pmi2 plugin.
SRUN_MPI = {"openmpi": ("pmix", "pmix_v5", "pmix_v4", "pmix_v3", "pmix_v2"),
            "mpich": ("pmi2",)}


# ---------------------------------------------------------------- the binary's answers

def _query(bench: Path, *args) -> dict:
    """jostle-bench's JSON answer to a query (a description, or a measurement: asked anew)."""
    try:
        out = subprocess.run([str(bench), *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise JostleError(f"'{bench} {' '.join(args)}' failed: {e}") from None
    if out.returncode == 2:  # bad input (a topology file, a NIC name): the user's to fix
        raise UsageError(out.stderr.strip().replace("jostle-bench: error: ", "")[-800:])
    if out.returncode != 0:
        raise JostleError(f"'{bench} {' '.join(args)}' exited {out.returncode}: "
                          f"{out.stderr.strip()[-500:]}")
    try:
        return json.loads(out.stdout)
    except ValueError:
        raise JostleError(f"'{bench} {' '.join(args)}' did not print JSON: "
                          f"{out.stdout.strip()[:200]!r}") from None


@functools.lru_cache(maxsize=32)
def _described(bench: str, stamp, env: tuple, args: tuple) -> dict:
    return _query(Path(bench), *args)


def _describe(bench: Path, *args) -> dict:
    """A query whose answer is fixed for one build and environment (the version, the
    machine), asked once per process: `jostle run` plans every step before running it, and
    a step's plan asks what its run asks. A rebuilt bench, a rewritten topology file or
    another environment (HWLOC_XMLFILE) asks again."""
    stamp = tuple(_file_stamp(f) for f in (bench, *args))
    env = tuple(sorted(os.environ.items()))
    return copy.deepcopy(_described(str(bench), stamp, env, args))


def _file_stamp(path):
    """What changes when a file is rewritten (None for an argument that is not a file)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns) if os.path.isfile(path) else None


def bench_version(bench: Path) -> dict:
    """{"version", "git", "mpi_library", "mpi_flavor"} without an MPI launch."""
    return _describe(bench, "--version")


def bench_machine(bench: Path, topology: Optional[str] = None) -> dict:
    return _describe(bench, "--machine", *(["--topology", topology] if topology else []))


def can_validate(bench: Path) -> bool:
    """Whether this jostle-bench judges a run's options without starting MPI (--validate);
    asked once per build and process, a bench that cannot say included."""
    return _can_validate(str(bench), _file_stamp(bench))


@functools.lru_cache(maxsize=8)
def _can_validate(bench: str, stamp) -> bool:
    try:
        common = _query(Path(bench), "--describe").get("common") or {}
    except JostleError:
        return False
    return any(o.get("name") == "validate-options" for o in common.get("options") or [])


def validate(bench: Path, benchmark: str, args, here: bool = True) -> None:
    """`jostle-bench BENCHMARK --validate ARGS`: the checks a run makes only after MPI has
    started (options and their combinations; with HERE, also core ids, NUMA nodes, NICs,
    topology file, kernel rates, external binaries of this host: a run on other hosts is asked
    `--validate-options`), made by the bench itself so that they are written once; its refusal
    is ours (exit 2, its one line). A bench without the mode is not asked (the run still judges)."""
    if not can_validate(bench):
        return
    argv = [str(bench), benchmark, "--validate" if here else "--validate-options",
            *map(str, args)]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise JostleError(f"'{shlex.join(argv)}' failed: {e}") from None
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    if r.returncode == 2:
        raise UsageError(lines[0].removeprefix(USAGE_PREFIX) if lines else
                         f"jostle-bench {benchmark} refused its options")
    if r.returncode != 0:
        raise JostleError(f"'{shlex.join(argv)}' exited {r.returncode}: "
                          + (lines[-1] if lines else ""))


# ---------------------------------------------------------------- the host

def host_cores() -> int:
    """Physical cores of this host: Open MPI counts slots in cores, not hardware threads."""
    cores = set()
    for topo in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/topology"):
        try:
            cores.add(((topo / "physical_package_id").read_text().strip(),
                       (topo / "core_id").read_text().strip()))
        except OSError:
            pass
    return len(cores) or os.cpu_count() or 1


def is_local(host: str) -> bool:
    import socket
    return host in ("localhost", "127.0.0.1", socket.gethostname(), socket.getfqdn())


# ---------------------------------------------------------------- command lines

@dataclass
class LaunchPlan:
    argv: list
    launcher: str
    ranks: int
    hosts: list = field(default_factory=list)
    oversubscribe: Optional[bool] = None   # None: not known (custom launcher, remote hosts)
    reason: str = ""                      # why oversubscribe is what it is

    @property
    def line(self) -> str:
        return shlex.join(self.argv)

    def to_dict(self) -> dict:
        return {**asdict(self), "command": self.line}


def choose_launcher(flavor: str, env=os.environ, which=shutil.which) -> tuple:
    """(kind, executable) for a binary of MPI FLAVOR; srun wins inside a SLURM job."""
    if env.get("SLURM_JOB_ID") and which("srun"):
        return "srun", "srun"
    kind = flavor if flavor in ("openmpi", "mpich") else "generic"
    for exe in EXECUTABLES[kind]:
        if which(exe):
            return kind, exe
    raise JostleError(f"no launcher found for a {flavor} jostle-bench (looked for "
                      + ", ".join(EXECUTABLES[kind]) + " on PATH); pass --launcher \"…\"")


def srun_mpi_plugins(run=subprocess.run) -> list:
    """The PMI plugins this srun offers (`srun --mpi=list`), versioned pmix ones included."""
    try:
        out = run(["srun", "--mpi=list"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise JostleError(f"'srun --mpi=list' failed: {e}") from None
    found = []
    # SLURM 22-23 print "MPI plugin types are...", a tab-indented name per line, then
    # "specific pmix plugin versions available: pmix_v4,…"; older ones prefix lines "srun: ".
    for line in (out.stdout + out.stderr).splitlines():
        line = line.removeprefix("srun:").strip()
        if "versions available:" in line:
            found += [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
        elif line and " " not in line and not line.endswith("..."):
            found.append(line)
    if not found:
        raise JostleError("'srun --mpi=list' listed no PMI plugin: "
                          + (out.stderr.strip() or out.stdout.strip())[-300:])
    return list(dict.fromkeys(found))


def choose_srun_mpi(flavor: str, available, override: Optional[str] = None) -> Optional[str]:
    """The srun --mpi plugin for a jostle-bench of MPI FLAVOR (None: the site's MpiDefault)."""
    if override:
        if override not in available:
            raise UsageError(f"--srun-mpi '{override}' is not offered by this srun; allowed: "
                             + ", ".join(available) + " (srun --mpi=list)")
        return override
    if flavor not in SRUN_MPI:
        return None   # an MPI we know nothing about: trust the site's default
    for name in SRUN_MPI[flavor]:
        if name in available:
            return name
    library = {"openmpi": "Open MPI", "mpich": "MPICH"}[flavor]
    raise JostleError(
        f"this srun offers the PMI plugins {', '.join(available)}, none of which starts a "
        f"{library} jostle-bench (it needs {' or '.join(SRUN_MPI[flavor][:2])}); ask the site "
        "for that SLURM plugin, pass --srun-mpi NAME if you know one of those works, or launch "
        f"with the MPI's own starter inside the allocation (--launcher \"{EXECUTABLES[flavor][0]}\")")


def _host_list(hosts, ranks):
    """a,b for one rank per host, a:2,b:2 when ranks must share hosts."""
    per = math.ceil(ranks / len(hosts))
    return ",".join(f"{h}:{per}" if per > 1 else h for h in hosts), per


def _oversubscription(ranks, hosts, cores, policy):
    if policy in (True, False):
        return policy, "forced by the caller"
    per_host = math.ceil(ranks / len(hosts)) if hosts else ranks
    if hosts and not all(is_local(h) for h in hosts):
        return False, "remote hosts: their core counts are not known here"
    if per_host > cores:
        return True, f"{per_host} rank(s) on a host with {cores} core(s)"
    return False, f"{per_host} rank(s) fit on {cores} core(s)"


def build_command(kind: str, bench, bench_argv: list, ranks: int, hosts=None, *,
                  exe: Optional[str] = None,
                  euid: Optional[int] = None, cores: Optional[int] = None,
                  oversubscribe="auto", prefix: Optional[str] = None,
                  platform: Optional[str] = None, hostfile: Optional[str] = None,
                  srun_mpi: Optional[str] = None, launcher_binds: bool = False) -> LaunchPlan:
    """The full command line that starts RANKS ranks of BENCH BENCH_ARGV with launcher KIND.
    LAUNCHER_BINDS: the launcher pins each rank to a core, for a reference program that binds
    nothing itself (bench/); jostle-bench binds its own threads and never asks for it."""
    if kind not in LAUNCHERS:
        raise UsageError(f"unknown launcher '{kind}': expected one of {', '.join(LAUNCHERS)}")
    hosts = list(hosts or [])
    euid = os.geteuid() if euid is None else euid
    cores = host_cores() if cores is None else cores
    tail = [str(bench), *map(str, bench_argv)]
    exe = exe or EXECUTABLES.get(kind, ("",))[0]
    plan = LaunchPlan([], kind, ranks, hosts)

    if kind == "custom":
        plan.argv = shlex.split(prefix or "") + tail
        plan.reason = "custom launcher: used verbatim"
        return plan

    over, plan.reason = _oversubscription(ranks, hosts, cores, oversubscribe)
    plan.oversubscribe = over
    if kind == "openmpi":
        argv = [exe]
        if euid == 0:
            argv.append("--allow-run-as-root")
        if over:
            argv.append("--oversubscribe")
        argv += ["--bind-to", "core" if launcher_binds else "none", "-np", str(ranks)]
        if hosts:
            argv += ["--host", _host_list(hosts, ranks)[0]]
            if len(hosts) > 1:
                argv += ["--map-by", "node"]
    elif kind == "mpich":
        # Hydra neither refuses root nor counts cores; nothing to allow.
        argv = [exe, "-n", str(ranks)]
        if hosts:
            argv += ["-hosts", _host_list(hosts, ranks)[0]]
        argv += ["-bind-to", "core" if launcher_binds else "none"]
    elif kind == "srun":
        argv = [exe, "-n", str(ranks), "--cpu-bind=cores" if launcher_binds else "--cpu-bind=none"]
        if srun_mpi:
            argv.append(f"--mpi={srun_mpi}")
        if hosts:
            per = _host_list(hosts, ranks)[1]
            argv += ["-N", str(len(hosts)), f"--ntasks-per-node={per}",
                     f"--nodelist={','.join(hosts)}"]
        else:
            argv += ["-N", "1"]   # no hosts named: an intra-node run
    elif kind == "smpirun":
        if not platform:
            raise UsageError("smpirun needs a SimGrid platform file (--platform FILE.xml)")
        argv = [exe, "-np", str(ranks), "-platform", str(platform)]
        if hostfile:
            argv += ["-hostfile", str(hostfile)]
    else:  # generic MPI: the standard's mpiexec -n
        argv = [exe, "-n", str(ranks)]
    plan.argv = argv + tail
    return plan


# ---------------------------------------------------------------- running

# How jostle-bench's rank 0 says a usage error (core/errors.c): once, however many ranks.
USAGE_PREFIX = "jostle-bench: error: "


@dataclass
class Outcome:
    status: str            # ok | failed | timeout | interrupted
    returncode: Optional[int]
    elapsed_s: float
    stderr_tail: str = ""
    usage_error: str = ""  # jostle-bench's usage error line, without its prefix


class RunInterrupted(Interrupted):
    """Ctrl-C (or SIGTERM/SIGHUP) during a run; carries what the stopped run left."""

    def __init__(self, outcome, signum=signal.SIGINT):
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.outcome = outcome
        self.signum = int(signum)
        self.exit_status = 128 + int(signum)  # 130 for Ctrl-C, as a shell reports it


def estimate_sweep(sizes, min_reps=None, max_time=None, warmup=None, slow_gbps=0.5,
                   benchmark="pingpong") -> float:
    """Seconds a sweep takes at most: each point its repetitions at a pessimistic bandwidth
    (SLOW_GBPS, slower than any real link) plus the time cap that may follow them. What is
    not given is jostle-bench's own default for BENCHMARK."""
    def given(v, name, kind):
        return kind(benchmarks.default(benchmark, name)) if v is None else kind(v)
    reps = given(min_reps, "min-reps", int) + given(warmup, "warmup", int)
    cap = given(max_time, "max-time", float)
    return sum(reps * (2 * s / (slow_gbps * 1e9) + 50e-6) + cap for s in sizes)


def estimate_timeout(sizes, min_reps=None, max_time=None, warmup=None, slow_gbps=0.5,
                     benchmark="pingpong") -> float:
    """A generous time-out for a sweep: its estimate doubled, and a minute for MPI start-up.
    Hangs still end; slow-but-working runs do not."""
    return round(60 + 2 * estimate_sweep(sizes, min_reps, max_time, warmup, slow_gbps,
                                         benchmark))


def _pump(stream, handle):
    for line in iter(stream.readline, ""):
        handle(line.rstrip("\n"))
    stream.close()


def _stop(proc, sig, grace):
    """Send SIG to the run's process group, then SIGKILL it if it outlives GRACE."""
    for s, wait in ((sig, grace), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, s)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def execute(argv, *, timeout: Optional[float], on_stdout: Callable = print,
            on_stderr: Optional[Callable] = None, on_progress: Optional[Callable] = None,
            env=None, grace: float = 10.0, stop: Optional["StopEvent"] = None) -> Outcome:
    """Run ARGV in its own process group; stream its output; stop it at TIMEOUT.

    stdout lines go to ON_STDOUT; stderr lines `progress D T` to ON_PROGRESS(D, T),
    the others to ON_STDERR. Ctrl-C is forwarded to the group as SIGINT (SIGTERM and
    SIGHUP as themselves) so that jostle-bench can close its file, then
    RunInterrupted is raised. Off the main thread (runs side by side), signals reach the
    main thread only: it sets STOP, and the run is stopped the same way.
    """
    tail = deque(maxlen=30)
    usage = []

    def err_line(line):
        if on_progress and line.startswith(_PROGRESS_PREFIX):
            parts = line.split()
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                on_progress(int(parts[1]), int(parts[2]))
                return
        tail.append(line)
        if line.startswith(USAGE_PREFIX) and not usage:
            usage.append(line[len(USAGE_PREFIX):])
        # A usage error is said once, by the caller; what follows it is the MPI library's
        # abort of the job (Open MPI's boxes, MPICH's "BAD TERMINATION"): not echoed.
        if on_stderr and not usage:
            on_stderr(line)

    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace",
                                bufsize=1, start_new_session=True, env=env)
    except OSError as e:
        raise JostleError(f"cannot start '{argv[0]}': {e.strerror}") from None
    pumps = [threading.Thread(target=_pump, args=(proc.stdout, on_stdout), daemon=True),
             threading.Thread(target=_pump, args=(proc.stderr, err_line), daemon=True)]
    for t in pumps:
        t.start()
    status, sig = None, signal.SIGINT
    saved = trap_termination()
    try:
        if stop is None:
            proc.wait(timeout)
        else:
            while proc.poll() is None and not stop.is_set():
                left = None if timeout is None else timeout - (time.monotonic() - t0)
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(argv, timeout)
                try:
                    proc.wait(0.1 if left is None else min(0.1, left))
                except subprocess.TimeoutExpired:
                    pass
            if stop.is_set() and proc.returncode is None:
                raise _Terminated(stop.signum)
    except subprocess.TimeoutExpired:
        status = "timeout"
        _stop(proc, signal.SIGTERM, grace)
    except (KeyboardInterrupt, _Terminated) as e:
        status, sig = "interrupted", getattr(e, "signum", signal.SIGINT)
        try:
            _stop(proc, sig, grace)
        except (KeyboardInterrupt, _Terminated):  # a second signal: no more patience
            _stop(proc, signal.SIGKILL, 1)
    finally:
        restore_termination(saved)
    for t in pumps:
        t.join(5)
    out = Outcome(status or ("ok" if proc.returncode == 0 else "failed"), proc.returncode,
                  time.monotonic() - t0, "\n".join(tail), usage[0] if usage else "")
    if status == "interrupted":
        raise RunInterrupted(out, sig)
    return out


class _Terminated(Exception):
    def __init__(self, signum):
        self.signum = signum


class StopEvent(threading.Event):
    """Set by the main thread when a signal asks runs on other threads to stop; signum says
    which one to forward."""
    signum = signal.SIGINT

    def request(self, signum):
        self.signum = signum
        self.set()


def signum_of(exc) -> int:
    """The signal an interruption came from: KeyboardInterrupt is SIGINT."""
    return getattr(exc, "signum", signal.SIGINT)


INTERRUPTIONS = (KeyboardInterrupt, _Terminated)


def trap_termination():
    """SIGTERM/SIGHUP to jostle (a batch system's time limit, a closed terminal) must
    reach the run too: it is in its own session, so it would otherwise be orphaned."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum, frame):
        raise _Terminated(signum)
    return {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}


def restore_termination(saved):
    for s, h in saved.items():
        signal.signal(s, h)
