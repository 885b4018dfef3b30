"""One `jostle check` (commands/check.py): its settings once the site file's defaults are
applied, its runs launched on this node under the watchdog, their values judged against the
class's references, and its record (docs/check.md, docs/records.md)."""

import os
import shutil
import signal
import socket
import sys
import tempfile
import time
import warnings
from pathlib import Path

from .. import STARTED, __version__
from ..analysis import check, check_site
from ..studies import check as check_study
from ..errors import JostleError, UsageError
from ..records.results import load_run
from ..run import check_node, launch, slurm
from ..run.campaign import LaunchConfig, unwritable_dir
from ..run.watchdog import Expired, Watchdog

BUDGET, TIMEOUT = 15.0, 30.0
SPOOL, STATE_DIR = "/var/spool/jostle", "/var/lib/jostle"
BUSY_SHARE, BUSY_USER_CORES, UID_MIN = 0.25, 0.1, 1000
BUSY_WINDOW_S = 0.5
# What a check does after its last step (reading the runs, judging, the record), and the
# grace a step stopped at the end of its share has between SIGTERM and SIGKILL: inside the
# budget too.
AFTER_S, STEP_GRACE_S = 0.4, 0.2

# ---------------------------------------------------------------- settings

class Settings:
    """The command's values once the site file's defaults are applied."""

    def __init__(self, args, site):
        d = site.defaults if site else {}
        self.budget = args.budget if args.budget is not None else d.get("budget", BUDGET)
        self.timeout = args.timeout if args.timeout is not None else d.get("timeout", TIMEOUT)
        if self.budget <= 0:
            raise UsageError(f"--budget {self.budget:g} is not allowed; expected a number > 0")
        if self.timeout < self.budget:
            raise UsageError(f"--timeout {self.timeout:g} is shorter than the budget "
                             f"({self.budget:g} s); allowed: --timeout of the budget or more")
        self.spool = Path(args.spool or os.environ.get("JOSTLE_SPOOL") or d.get("spool", SPOOL))
        self.state_dir = Path(args.state_dir or os.environ.get("JOSTLE_STATE_DIR")
                              or d.get("state_dir", STATE_DIR))
        self.busy_share = args.busy_share or d.get("busy_share", BUSY_SHARE)
        self.busy_user_cores = d.get("busy_user_cores", BUSY_USER_CORES)
        self.uid_min = d.get("uid_min", UID_MIN)
        self.reserve = min(3.0, 0.2 * self.timeout)


_LOADED = STARTED     # when this check began: the package's import, then each main() (mark_start)
# At most this much of the process's life before that counts (the interpreter's own start):
# a wrapper that sleeps and then execs jostle (a staggered health check) keeps its pid, and so
# its start time; a process that runs several checks (tests, a daemon) has lived long before.
BEFORE_LOAD_MAX_S = 2.0


_PROCESS_COUNTS = True         # the process's life before _LOADED counts (up to the max)


def mark_start(process_counts: bool = True, whole_process: bool = False) -> None:
    """This check begins now: the budget of a second check in one process is its own (and,
    without PROCESS_COUNTS, owes nothing to the process's start: a reference's next check);
    WHOLE_PROCESS: the process is this command, its imports count whole."""
    global _LOADED, _PROCESS_COUNTS
    _LOADED = STARTED if whole_process else time.monotonic()
    _PROCESS_COUNTS = process_counts


def started_ago() -> float:
    """Seconds since the check started: since the process started (/proc/self/stat's start
    time against /proc/uptime: the interpreter's start-up counts against the budget too), but
    at most BEFORE_LOAD_MAX_S before this check began (mark_start)."""
    since_load = time.monotonic() - _LOADED
    if not _PROCESS_COUNTS:
        return since_load
    try:
        with open("/proc/self/stat") as f:
            start = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
        with open("/proc/uptime") as f:
            since_start = max(0.0, float(f.read().split()[0]) - start)
    except (OSError, ValueError, IndexError):
        return since_load
    return since_load + min(max(0.0, since_start - since_load), BEFORE_LOAD_MAX_S)


def node_name(args) -> str:
    name = args.node or slurm.node_name() or socket.gethostname().split(".")[0]
    if not check_site.NAME_RE.match(name.replace(".", "_")):
        raise UsageError(f"--node '{name}' is not allowed; expected a host name")
    return name


def child_env(line="") -> dict:
    """The runs' environment: no SLURM_* (slurm.without_job), the launch line for the meta
    line."""
    env = slurm.without_job()
    env["JOSTLE_LAUNCH_LINE"] = line
    return env


def launch_config(args, bench, flavor) -> LaunchConfig:
    """This node's own launcher: the MPI's mpirun/mpiexec, never srun (a health check and a
    prolog run outside any job step), or --launcher."""
    if args.launcher is not None:
        return LaunchConfig(bench, "custom", prefix=args.launcher)
    kind, exe = launch.choose_launcher(flavor, env=child_env())
    return LaunchConfig(bench, kind, exe=exe)


def _writable(option, d: Path):
    why = unwritable_dir(d)
    if why:
        raise UsageError(f"{option} '{d}' cannot be written: {why}")


# ---------------------------------------------------------------- one check

class Check:
    """One check of the node: the runs, their values, the verdict, the record."""

    def __init__(self, args, st: Settings, node, bench):
        self.args, self.st, self.node, self.bench = args, st, node, bench
        self.cls, self.checks, self.refs, self.config = None, [], {}, None
        self.facts, self.mpi, self.runs = {}, None, []
        self.values, self.notes, self.load, self.timings = [], [], {}, []
        self.start = check_node.utc()
        self.nics_now = {}
        self.unfinished = {}     # {benchmark: its share}: a step stopped at the end of it
        self.after_s = AFTER_S   # what the check does after its steps (choose_runs scales it)
        self.stopped = {}        # {benchmark: results.Run}: what such a step had measured

    def choose_runs(self, cls, checks, refs, config, facts, mpi):
        """The runs of CHECKS for class CLS in what is left of the budget."""
        self.cls, self.checks, self.refs, self.config = cls, checks, refs, config
        self.facts, self.mpi = facts, mpi
        import pandas  # noqa: F401  (reading the runs needs it: its import is start-up, counted)
        now, ref_start = started_ago(), cls.step_seconds.get(check.START)
        # what follows the steps (judging, the record) is as much slower as this start was than
        # the reference's: at 30% of a core 0.4 s took 1.5 s, and the check ended at 11.1 s of
        # a budget of 10 (+1)
        self.after_s = AFTER_S * max(1.0, now / ref_start) if ref_start else AFTER_S
        self.runs = check_study.plan(checks, self.st.budget - now, self.node,
                               cls.options, self.st.budget, cls.step_seconds.get(check.LAUNCH))

    def argv(self, spec, out):
        a = [spec.benchmark, *spec.args, "--output", str(out), "--quiet"]
        if self.config.kind == "custom":
            cfg = LaunchConfig(self.bench, "custom",
                               prefix=self.config.prefix.replace("{np}", str(spec.ranks)))
            return cfg.plan(spec, a)
        return self.config.plan(spec, a)

    def measure(self, wd: Watchdog, runs_dir: Path) -> dict:
        """{benchmark: [results.Run of each launch]} of the plan's runs (a failed run: its
        message)."""
        out = {}
        for spec in self.runs:
            path = runs_dir / f"{spec.name}.jsonl"
            for p in (path, path.with_name(path.name + ".partial")):
                p.unlink(missing_ok=True)
            plan = self.argv(spec, path)
            t0 = started_ago()
            self.timings.append({"benchmark": spec.benchmark, "start_s": round(t0, 3)})
            # each step stopped at the end of its share, and none past the budget's end less
            # what the check does after: the others still run in theirs
            share = max(0.0, min(spec.timeout, self.st.budget - self.after_s - STEP_GRACE_S - t0))
            if share < STEP_GRACE_S:     # none left (a slow start): a launch would only be killed
                self.timings[-1].update(status="not started", elapsed_s=0.0, share_s=round(share, 3))
                if not isinstance(out.get(spec.benchmark), str):
                    self.unfinished[spec.benchmark] = share
                    out[spec.benchmark] = (f"did not finish in its {share:.2g} s share of the "
                                           "budget (none was left to start it)")
                continue
            res = wd.run(plan.argv, spec.benchmark, env=child_env(plan.line),
                         timeout=share, grace=STEP_GRACE_S)
            self.timings[-1].update(status=res.status, elapsed_s=round(res.elapsed_s, 3),
                                    share_s=round(share, 3))
            b = spec.benchmark
            if isinstance(out.get(b), str):
                continue      # an earlier launch of it failed: that is its result
            if res.status == "timeout":
                self.unfinished[b] = share
                out[b] = f"did not finish in its {share:.2g} s share of the budget (stopped)"
                try:    # the points it measured before it was stopped are judged
                    with warnings.catch_warnings():     # incomplete: known, and said
                        warnings.simplefilter("ignore")
                        run = load_run(path.with_name(path.name + ".partial"),
                                       allow_incomplete=True)
                    if not run.points.empty:
                        self.stopped[b] = run
                except (JostleError, OSError):
                    pass
            elif res.status == "ok" and path.exists():
                try:
                    run = load_run(path)
                except JostleError as e:    # a record the run left damaged
                    out[b] = f"its record cannot be read: {str(e)[:160]}"
                    continue
                out.setdefault(b, []).append(run)
                own = (run.end or {}).get("elapsed_s")
                # mpirun, MPI_Init and MPI_Finalize: read where no working set is built
                # (jostle-bench's own time leaves its build out)
                if isinstance(own, (int, float)) and b not in check.BUILDS:
                    self.timings[-1]["launch_s"] = round(max(0.0, res.elapsed_s - own), 3)
            else:
                tail = (res.stderr.strip().splitlines() or [f"exit status {res.returncode}"])
                out[b] = f"its run failed ({res.status}): {tail[-1][:160]}"
        return out

    def judge(self, runs: dict):
        good = {b: r for b, r in runs.items() if not isinstance(r, str)}
        values, notes = check.values_of({**good, **self.stopped}) if good or self.stopped \
            else ({}, {})
        sets, smaller = check.working_set_notes(good, self.cls.options if self.cls
                                                else check.RunOptions())
        notes.update({n: sets[m.benchmark] for n, m in check.METRICS.items() if m.benchmark in sets})
        self.notes = [f"{k}: {v}" for k, v in notes.items() if k in self.checks]
        failed_runs = {b: r for b, r in runs.items() if isinstance(r, str)}
        for name in self.checks:
            if name == check.NIC:
                continue
            m = check.METRICS[name]
            v = values.get(name, float("nan"))
            if m.benchmark in self.unfinished and v == v and name not in notes:
                v = check.judge_value(name, v, self.refs.get(name), f"{m.benchmark} was "
                                      "stopped at the end of its share: its points before that")
            elif m.benchmark in self.unfinished:
                took = self.cls.step_seconds if self.cls else {}
                start = (self.timings[0]["start_s"], took.get(check.START)) if self.timings \
                    else None
                v = check.unfinished(name, self.refs.get(name), self.unfinished[m.benchmark],
                                     took.get(m.benchmark), start)
            elif m.benchmark in failed_runs:
                v = check.Value(name, None, m.unit, (self.refs.get(name) or {}).get("value"),
                                verdict="fail", note=f"{m.benchmark}: {failed_runs[m.benchmark]}")
            elif name in notes and m.benchmark in smaller:
                v = check.judge_flattered(name, v, self.refs.get(name), notes[name])
            elif name in notes:
                v = check.judge_value(name, float("nan"), self.refs.get(name), notes[name])
            else:
                v = check.judge_value(name, v, self.refs.get(name))
            self.values.append(v)
        if check.NIC in self.checks and self.cls and self.cls.nics:
            self.values += check.judge_nics(self.nics_now, self.cls.nics)

    def record(self, status, line, **more) -> dict:
        return {"type": "check", "schema": 1, "tool": "jostle check", "version": __version__,
                "node": self.node, "class": self.cls.name if self.cls else None,
                "site": str(self.args.site_path), "time": self.start, "end": check_node.utc(),
                "duration_s": round(started_ago(), 3), "budget_s": self.st.budget,
                "unfinished": sorted(self.unfinished) or None,
                "timeout_s": self.st.timeout, "verdict": check.verdict_word(status),
                "exit_status": status, "reason": line,
                "checks_run": list(dict.fromkeys(s.benchmark for s in self.runs)),
                "runs": self.timings,
                "values": [v.to_dict() for v in self.values], "notes": self.notes,
                "load": self.load, "machine": self.facts, "mpi": self.mpi,
                "options": (self.cls.options if self.cls else check.RunOptions()).to_dict(),
                "baseline": self.cls.baseline if self.cls else None,
                **more}


def run_once(chk: Check, wd: Watchdog, runs_dir: Path) -> tuple:
    """(status, line) of one check under WD."""
    st = chk.st
    pre = check_node.busy_now(BUSY_WINDOW_S, st.uid_min)
    chk.load["before"] = pre.to_dict()
    why = check_node.why_busy(pre, st.busy_share, st.busy_user_cores, before=True)
    if why and not chk.args.no_busy_check:
        return check.SKIPPED, f"jostle: skipped: node busy: {why}"
    chk.nics_now = check_node.nics()
    meter = check_node.LoadMeter(st.uid_min)
    meter.start()
    killed = wd.killed_cpu_s
    try:
        runs = chk.measure(wd, runs_dir)
    except Expired as e:     # a hang, or others' work that left the check no time?
        during = meter.stop(wd.killed_cpu_s - killed)
        chk.load["during"] = during.to_dict()
        why = check_node.why_busy(during, st.busy_share, st.busy_user_cores, before=False)
        if why and not chk.args.no_busy_check:
            return check.SKIPPED, (f"jostle: skipped: node busy: {why}; {e.what} was still "
                                   "running at the watchdog's limit")
        raise
    during = meter.stop(wd.killed_cpu_s - killed)
    chk.load["during"] = during.to_dict()
    chk.judge(runs)
    status, line = check.verdict(chk.values)
    why = check_node.why_busy(during, st.busy_share, st.busy_user_cores, before=False)
    if status == check.UNHEALTHY and why and not chk.args.no_busy_check:
        return check.SKIPPED, f"jostle: skipped: node busy: {why} (it would have read: {line})"
    return status, line


def prepare(args, st, chk, cls, checks, refs, version, facts, run):
    """CHK planned and its inputs checked (the bench's --validate through RUN, under the
    watchdog), before anything is measured or written."""
    _writable("--spool", st.spool)
    if args.slurm:
        _writable("--state-dir", st.state_dir)
        if not slurm.has("scontrol"):
            raise UsageError("--slurm: there is no scontrol on PATH")
    if args.runs_dir:
        _writable("--runs-dir", Path(args.runs_dir))
    config = launch_config(args, chk.bench, version.get("mpi_flavor", "other"))
    chk.choose_runs(cls, checks, refs, config, facts, version.get("mpi_library"))
    for spec in chk.runs:
        check_node.bench_validate(run, chk.bench, spec.benchmark, spec.args)
    return chk


def dry_run(chk: Check) -> int:
    for spec in chk.runs:
        print(chk.argv(spec, f"RUNS/{spec.name}.jsonl").line)
    print(f"jostle: check of {chk.node} ({chk.cls.name if chk.cls else '-'}): "
          f"{', '.join(chk.checks)} in {chk.st.budget:g} s, watchdog {chk.st.timeout:g} s",
          file=sys.stderr)
    return 0


class Killed(BaseException):
    """SIGTERM or SIGHUP: the check ends its runs, keeps a record and exits 128 + N (a
    BaseException: nothing on the way catches it as an error)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def on_signals() -> dict:
    """SIGTERM and SIGHUP (slurmd's kill, NHC's watchdog, an operator's kill) raise Killed;
    returns the handlers they had, for the caller to put back."""
    def killed(signum, _frame):
        raise Killed(signum)
    return {sig: signal.signal(sig, killed) for sig in (signal.SIGTERM, signal.SIGHUP)}


def _runs_dir(args, st: Settings):
    if args.runs_dir:
        d = Path(args.runs_dir)
        d.mkdir(parents=True, exist_ok=True)
        return d, False
    (st.spool / "runs").mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".check-{os.getpid()}-", dir=st.spool / "runs")), True


def left_behind(st: Settings) -> list:
    """[(start time, the step it was in)] of the checks killed by SIGKILL before their
    record (their runs folder in the spool, its process gone), the folders removed."""
    found = []
    for d in sorted((st.spool / "runs").glob(".check-*")):
        pid = d.name.split("-")[1]
        if not pid.isdigit() or Path(f"/proc/{pid}").exists():
            continue
        steps = sorted(d.glob("fp-*"), key=lambda p: p.stat().st_mtime)   # the last begun
        step = steps[-1].name.split("-")[1] if steps else "its start"
        found.append((d.stat().st_mtime, step))
        shutil.rmtree(d, ignore_errors=True)
    return found


