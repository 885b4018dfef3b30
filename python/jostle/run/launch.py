"""The command line that starts a run's ranks: one class per launcher (mpirun of Open MPI,
MPICH's mpiexec, srun, smpirun, a generic mpiexec, a custom prefix), each in the registry
LAUNCHERS by its name; which one fits a build and a host; srun's PMI plugin.
process.py runs the line, bench_query.py asks the bench, estimate.py times it.

Every launcher gets "no binding" from the launcher itself: jostle-bench binds
each of its threads and buffers through hwloc and records what it obtained, and
a launcher binding would fight with it (or silently confine it to one core).
"""

import functools
import math
import os
import shlex
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import JostleError, UsageError
from ..registry import Registry
from . import slurm

# srun starts ranks through a PMI plugin (--mpi=…); without one it takes the site's MpiDefault,
# often "none", under which MPI_Init fails. The plugins each MPI build can use, best first:
# Open MPI 4.x talks PMIx (Debian builds it without SLURM's PMI-1/2 libraries), MPICH's
# default client (Hydra's PMI) speaks the PMI-2 wire protocol of srun's pmi2 plugin.
SRUN_MPI = {"openmpi": ("pmix", "pmix_v5", "pmix_v4", "pmix_v3", "pmix_v2"),
            "mpich": ("pmi2",)}


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
    return host in _local_names()


@functools.lru_cache(maxsize=1)
def _local_names() -> tuple:
    """This host's names, looked up once: getfqdn asks the resolver, and a scan asks of every
    host of every run (a link run of 1 000 nodes names them all)."""
    import socket
    return ("localhost", "127.0.0.1", socket.gethostname(), socket.getfqdn())


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
    if slurm.in_job(env) and which("srun"):
        return "srun", "srun"
    kind = flavor if flavor in ("openmpi", "mpich") else "generic"
    for exe in EXECUTABLES[kind]:
        if which(exe):
            return kind, exe
    raise JostleError(f"no launcher found for a {flavor} jostle-bench (looked for "
                      + ", ".join(EXECUTABLES[kind]) + " on PATH); pass --launcher \"…\"")


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


@dataclass
class Launch:
    """What a launcher's command line depends on, decided once by build_command."""
    exe: str
    ranks: int
    hosts: list
    over: bool               # oversubscribed: more ranks than cores on a host
    euid: int
    binds: bool              # the launcher pins each rank to a core (a reference program)
    srun_mpi: Optional[str] = None
    platform: Optional[str] = None
    hostfile: Optional[str] = None
    prefix: Optional[str] = None
    mca: tuple = ()          # Open MPI's --mca NAME VALUE, in pairs (run.transport)


class Launcher:
    """A launcher kind: the executables tried for it, most specific first (on Debian the bare
    `mpirun`/`mpiexec` are alternatives that may point at either MPI), and its argv before the
    bench's."""
    name = ""
    executables: tuple = ()
    counts_cores = True      # False: the line is the user's, oversubscription unknown
    simulated = False        # its ranks are simulated: their bench (another build) answers
                             # nothing outside this launcher, so it is asked nothing before

    def argv(self, x: Launch) -> list:
        raise NotImplementedError


LAUNCHERS = Registry("launcher")


def register(cls):
    """Class decorator: the launcher is known by its name (LaunchConfig.kind); a name taken
    twice is refused."""
    LAUNCHERS.add(cls.name, cls())
    return cls


@register
class OpenMPI(Launcher):
    name, executables = "openmpi", ("mpirun.openmpi", "mpiexec.openmpi", "mpirun")

    def argv(self, x):
        argv = [x.exe] + (["--allow-run-as-root"] if x.euid == 0 else [])
        argv += ["--oversubscribe"] if x.over else []
        argv += [a for i in range(0, len(x.mca), 2) for a in ("--mca", *x.mca[i:i + 2])]
        argv += ["--bind-to", "core" if x.binds else "none", "-np", str(x.ranks)]
        if x.hosts:
            argv += ["--host", _host_list(x.hosts, x.ranks)[0]]
            argv += ["--map-by", "node"] if len(x.hosts) > 1 else []
        return argv


@register
class MPICH(Launcher):
    name, executables = "mpich", ("mpiexec.mpich", "mpiexec.hydra", "mpiexec")

    def argv(self, x):
        # Hydra neither refuses root nor counts cores; nothing to allow.
        argv = [x.exe, "-n", str(x.ranks)]
        argv += ["-hosts", _host_list(x.hosts, x.ranks)[0]] if x.hosts else []
        return argv + ["-bind-to", "core" if x.binds else "none"]


@register
class Srun(Launcher):
    name, executables = "srun", ("srun",)

    def argv(self, x):
        argv = [x.exe, "-n", str(x.ranks), "--cpu-bind=cores" if x.binds else "--cpu-bind=none"]
        argv += [f"--mpi={x.srun_mpi}"] if x.srun_mpi else []
        if x.hosts:
            per = _host_list(x.hosts, x.ranks)[1]
            return argv + ["-N", str(len(x.hosts)), f"--ntasks-per-node={per}",
                           f"--nodelist={','.join(x.hosts)}"]
        return argv + ["-N", "1"]   # no hosts named: an intra-node run


@register
class Smpirun(Launcher):
    """SimGrid: the ranks are simulated on the platform's hosts; PREFIX, when given, is more of
    smpirun's own flags (--cfg=…, --log=…)."""
    name, executables, simulated = "smpirun", ("smpirun",), True

    def argv(self, x):
        if not x.platform:
            raise UsageError("smpirun needs a SimGrid platform file (--platform FILE.xml)")
        argv = [x.exe, "-np", str(x.ranks), "-platform", str(x.platform)]
        argv += ["-hostfile", str(x.hostfile)] if x.hostfile else []
        return argv + shlex.split(x.prefix or "")


@register
class Generic(Launcher):
    """Any MPI: the standard's mpiexec -n."""
    name, executables = "generic", ("mpiexec", "mpirun")

    def argv(self, x):
        return [x.exe, "-n", str(x.ranks)]


@register
class Custom(Launcher):
    """--launcher "PREFIX": the user's own line, used verbatim."""
    name, counts_cores = "custom", False

    def argv(self, x):
        return shlex.split(x.prefix or "")


EXECUTABLES = {n: k.executables for n, k in LAUNCHERS.items() if k.executables}


def build_command(kind: str, bench, bench_argv: list, ranks: int, hosts=None, *,
                  exe: Optional[str] = None,
                  euid: Optional[int] = None, cores: Optional[int] = None,
                  oversubscribe="auto", prefix: Optional[str] = None,
                  platform: Optional[str] = None, hostfile: Optional[str] = None,
                  srun_mpi: Optional[str] = None, launcher_binds: bool = False,
                  mca=()) -> LaunchPlan:
    """The full command line that starts RANKS ranks of BENCH BENCH_ARGV with launcher KIND.
    LAUNCHER_BINDS: the launcher pins each rank to a core, for a reference program that binds
    nothing itself (bench/); jostle-bench binds its own threads and never asks for it. MCA:
    Open MPI's --mca settings, NAME VALUE pairs in a flat list (run.transport)."""
    launcher = LAUNCHERS[kind]
    hosts = list(hosts or [])
    plan = LaunchPlan([], kind, ranks, hosts)
    over, plan.reason = False, "custom launcher: used verbatim"
    if launcher.counts_cores:
        cores = host_cores() if cores is None else cores
        over, plan.reason = _oversubscription(ranks, hosts, cores, oversubscribe)
        plan.oversubscribe = over
    x = Launch(exe or (launcher.executables or ("",))[0], ranks, hosts, over,
               os.geteuid() if euid is None else euid, launcher_binds, srun_mpi, platform,
               hostfile, prefix, tuple(mca))
    plan.argv = launcher.argv(x) + [str(bench), *map(str, bench_argv)]
    return plan


