"""Campaigns: a directory results/<campaign>/ and the runs that fill it.

A run whose <name>.jsonl exists is complete (jostle-bench renames the .partial
only after a good end line) and is never run again: resuming a campaign after a
crash, a time-out or Ctrl-C re-does only what is missing.
"""

import concurrent.futures
import fcntl
import json
import os
import socket
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Optional

from . import bench_query, launch, process, transport
from ..errors import Interrupted, JostleError, UsageError
from .progress import Progress
from ..records.resume import keepable, rest_output, splice
from ..records.lines import file_state, read as read_lines
from ..records.sidecar import sidecar_path
from ..records.repeats import job_name
from ..units import duration

MANIFEST = "campaign.json"


@dataclass
class RunSpec:
    name: str
    benchmark: str
    args: list = field(default_factory=list)
    ranks: int = 2
    hosts: list = field(default_factory=list)
    timeout: Optional[float] = None   # seconds; None: no limit
    estimate: Optional[float] = None  # seconds it should take at most, when the sweep says


def repeated(specs, times: int) -> list:
    """Each run of SPECS TIMES times, as separate launches named NAME-r1 … NAME-rTIMES: one MPI
    job is one draw of what a job gets (its buffers' physical pages), so a comparison needs
    several (docs/statistics.md). TIMES = 1 keeps the runs and their names as they are."""
    if times <= 1:
        return list(specs)
    return [replace(s, name=job_name(s.name, i)) for s in specs for i in range(1, times + 1)]


class RunTimeout(JostleError):
    """A run stopped at its time-out (it hung, or a host did not answer)."""


@dataclass
class Failure:
    """How a run of a keep-going campaign failed."""
    message: str
    timeout: bool


@dataclass
class LaunchConfig:
    """How every run of a campaign is started (see launch.build_command)."""
    bench: Path
    kind: str
    exe: Optional[str] = None
    prefix: Optional[str] = None
    oversubscribe: object = "auto"
    platform: Optional[str] = None
    hostfile: Optional[str] = None
    srun_mpi: Optional[str] = None
    restart: bool = False   # measure an interrupted run from its first point (--restart)

    def plan(self, spec: RunSpec, bench_argv: list, mca=()) -> launch.LaunchPlan:
        return launch.build_command(self.kind, self.bench, bench_argv, spec.ranks, spec.hosts,
                                    exe=self.exe, prefix=self.prefix,
                                    oversubscribe=self.oversubscribe,
                                    platform=self.platform, hostfile=self.hostfile,
                                    srun_mpi=self.srun_mpi, mca=mca)

    def asks_transport(self, spec: RunSpec) -> bool:
        """Whether the campaign asks the transport settings for SPEC's launch (run.transport):
        jostle's own Open MPI line, on this host (another host's files may differ)."""
        return self.kind == "openmpi" and all(launch.is_local(h) for h in spec.hosts)


def unwritable_dir(directory) -> str:
    """Why DIRECTORY could not be made and written to, or "": asked of the nearest existing
    ancestor with a file created and removed at once (root passes access(2) everywhere, /proc
    included), so nothing is left behind."""
    d = Path(directory).absolute()
    while not d.exists() and d != d.parent:
        d = d.parent
    if not d.is_dir():
        return f"'{d}' is not a directory"
    try:
        tempfile.TemporaryFile(dir=d).close()
    except OSError as e:
        return f"'{d}' is not writable ({e.strerror})"
    return ""


def _now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def seal(partial: Path, status: str, wait: float = 10.0, **fields) -> bool:
    """Give a stopped run's file the end line its writer could not write (killed before its
    signal handler ran: a launcher's SIGKILL is often quicker), so that a stopped run always
    says how it ended. Waits up to WAIT s for the writer's lock (jostle-bench holds one until
    it exits, so the two never both write an end line); a torn last line, no measurement, is
    dropped. A run's own end line gets jostle's signal beside its own (field jostle_signal).
    Returns whether an end line was added or amended."""
    try:
        f = partial.open("r+b")
    except OSError:
        return False
    with f:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return False    # still written to: its writer will close it
                time.sleep(0.05)
            except OSError:
                break               # no locks on this file system
        data = f.read()
        keep = data[:data.rfind(b"\n") + 1]
        lines = keep.splitlines()
        try:
            last = json.loads(lines[-1]) if lines else {}
        except ValueError:
            last = {}
        if isinstance(last, dict) and last.get("type") == "end":
            if "jostle_signal" not in fields or "jostle_signal" in last:
                return False
            # the run's own end line, with its signal (a launcher may forward another than
            # the one jostle got): the signal jostle received is added beside it
            keep = keep[:len(keep) - len(lines[-1]) - 1]
            end = {**last, "jostle_signal": fields["jostle_signal"]}
        else:
            end = {"type": "end", "status": status,
                   "points": sum(b'"type":"point"' in line for line in lines),
                   **fields, "written_by": "jostle"}
        f.truncate(len(keep))
        f.seek(len(keep))
        f.write(json.dumps(end, separators=(",", ":")).encode() + b"\n")
        return True


def _count_points(path: Path) -> int:
    return file_state(path).points


def _own_args(argv) -> list:
    """A recorded argv without the program and what the campaign adds to every run."""
    out, skip = [], False
    for a in argv[1:]:
        if skip:
            skip = False
        elif a in ("--output", "--skip-points"):
            skip = True
        elif a not in ("--progress", "--quiet"):
            out.append(a)
    return out


def _resolved(config):
    """CONFIG as a function of the RunSpec, each run's asked once (validated, then launched)."""
    if not callable(config):
        return lambda spec: config
    known = {}
    return lambda spec: known[spec.name] if spec.name in known else known.setdefault(
        spec.name, config(spec))


class Campaign:
    def __init__(self, directory, runs):
        self.dir = Path(directory)
        self.runs = list(runs)
        self._asked = {}   # bench -> transport.Query, while run() runs
        seen, dup = set(), set()   # linear: a plan may hold thousands of runs
        for r in self.runs:
            (dup if r.name in seen else seen).add(r.name)
        if dup:
            raise UsageError(f"run name(s) {', '.join(sorted(dup))} appear twice in the campaign")

    @property
    def name(self) -> str:
        return self.dir.name

    def output(self, spec) -> Path:
        return self.dir / f"{spec.name}.jsonl"

    def bench_argv(self, spec, quiet=True, kept=None) -> list:
        """What jostle-bench is given for SPEC: its arguments and what the campaign adds (to
        measure only what KEPT, the points of an interrupted run, lacks)."""
        out = self.output(spec)
        more = ["--skip-points", str(kept.points), "--output", str(rest_output(out))] if kept \
            else ["--output", str(out)]
        return [spec.benchmark, *spec.args, *more, "--progress", *(["--quiet"] if quiet else [])]

    def _made_as(self, spec, meta) -> bool:
        """Whether META is of a run of SPEC's options and ranks."""
        ranks = (meta.get("mpi") or {}).get("ranks")
        return (_own_args(meta.get("argv") or []) == [spec.benchmark, *spec.args]
                and ranks in (None, spec.ranks))

    def dry_run(self, config, quiet=True) -> int:
        """Print the command line of every run still to make, then (on stderr) how many and
        how long they should take; launch nothing. config: as for run()."""
        config_of = _resolved(config)
        self.check_writable()
        # Judged as the run judges them: a damaged record or one of other options is refused.
        todo = [s for s in self.runs if not self.is_complete(s)]
        self.validate(todo, config_of)
        for spec in todo:
            print(config_of(spec).plan(spec, self.bench_argv(spec, quiet)).line)
        print(f"jostle: dry run: {self.plan(todo)}", file=sys.stderr)
        return 0

    def plan(self, todo) -> str:
        """How many of the runs TODO are to make and how long they take at most (their
        estimates, else their time-outs): what --dry-run prints, and a run before it starts."""
        known = [s.estimate or s.timeout for s in todo]
        secs = sum(x for x in known if x)
        bound = (f"; at most about {duration(secs)}"
                 + ("" if all(s.estimate for s in todo) else " (from the runs' time-outs)")
                 if secs else "")
        return (f"{len(todo)} run(s) to make, {len(self.runs) - len(todo)} already complete in "
                f"{self.dir}{bound}")

    def is_complete(self, spec) -> bool:
        out = self.output(spec)
        if not out.exists():
            return False
        try:
            run = read_lines(out)
        except JostleError as e:
            raise JostleError(f"{out} exists but is not a complete run ({e}); "
                              "move it away to run it again") from None
        # Resuming by name alone would pass off a run of other options as this one.
        made, planned = _own_args(run.meta.get("argv") or []), [spec.benchmark, *spec.args]
        ranks = (run.meta.get("mpi") or {}).get("ranks")
        if not self._made_as(spec, run.meta):
            raise UsageError(
                f"{out} was made with other options ({ranks} ranks: {' '.join(made)}) than this "
                f"campaign plans for it ({spec.ranks} ranks: {' '.join(planned)}); use another "
                "--campaign, or move the file away to measure it again")
        return True

    def check_writable(self):
        """Refuse (exit 2) a directory that could not be made or written, creating nothing:
        what a dry run says of the output before the run would find it."""
        why = unwritable_dir(self.dir)
        if why:
            raise UsageError(f"output directory {ascii(str(self.dir))} cannot be written: {why}")

    @staticmethod
    def validate(specs, config_of):
        """What jostle-bench would refuse once MPI has started, asked of it before anything
        launches (the dry run and the run alike): a run on other hosts has only its options
        judged, since this machine is the one the bench knows; simulated runs (another build)
        are left alone. A question is asked once: a scan's runs repeat theirs node after node
        (3 000 answers of ~35 ms for 1 000 nodes)."""
        asked = set()
        for spec in specs:
            config = config_of(spec)
            if launch.LAUNCHERS[config.kind].simulated:
                continue
            here = all(launch.is_local(h) for h in spec.hosts)
            question = (str(config.bench), spec.benchmark, tuple(map(str, spec.args)), here)
            if question not in asked:
                asked.add(question)
                bench_query.validate(config.bench, spec.benchmark, spec.args, here=here)

    def prepare(self):
        """Create the directory (or say clearly why not) and record the plan in it."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            probe = self.dir / ".jostle-write-test"
            probe.write_text("")
            probe.unlink()
        except OSError as e:
            raise UsageError(f"output directory '{self.dir}' is not writable: {e.strerror}") from None
        manifest = self.dir / MANIFEST
        known = {}
        if manifest.exists():
            try:
                known = {r["name"]: r for r in json.loads(manifest.read_text())["runs"]}
            except (ValueError, KeyError, TypeError):
                known = {}
        known.update({r.name: asdict(r) for r in self.runs})
        manifest.write_text(json.dumps({"campaign": self.name, "runs": list(known.values())},
                                       indent=1) + "\n")

    def run(self, config, progress: Optional[Progress] = None, quiet: bool = False,
            jobs: int = 1, keep_going: bool = False) -> list:
        """Run what is missing, in order; returns [(spec, 'skipped'|'ok')]. Stops at the first
        failure. config: the LaunchConfig of every run, or a function of the RunSpec giving
        each its own (one library or platform per run). JOBS > 1 runs that many side by side
        (simulated runs, or runs each on hosts of its own); after a failure the runs already
        started finish and no other starts. KEEP_GOING: a run that fails or times out does not
        stop the others; its entry is (spec, Failure) instead (a scan: one dead node)."""
        config_of = _resolved(config)
        progress = progress or Progress()
        # All checked first, before the directory is made: a run made with other options, or
        # one the bench refuses, is refused before anything is written or measured.
        complete = [self.is_complete(spec) for spec in self.runs]
        # asked in the background while the rest is judged (run.transport), once per bench
        self._asked = {}
        for spec, done in zip(self.runs, complete):
            c = config_of(spec)
            if not done and c.asks_transport(spec) and str(c.bench) not in self._asked:
                self._asked[str(c.bench)] = transport.Query(c.bench)
        self.validate([s for s, done in zip(self.runs, complete) if not done], config_of)
        self.prepare()
        todo, failed = [], {}
        one = self._one
        if keep_going:
            def one(k, spec, *rest):
                try:
                    self._one(k, spec, *rest)
                except Interrupted:
                    raise
                except JostleError as e:
                    failed[spec.name] = Failure(str(e), isinstance(e, RunTimeout))
        # a sweep's time planned before it starts (the studies whose runs estimate it)
        left = [s for s, done in zip(self.runs, complete) if not done]
        if left and all(s.estimate for s in left):
            progress.note(f"plan: {self.plan(left)}")
        with progress.campaign(len(self.runs), done=sum(complete)):
            for k, (spec, skip) in enumerate(zip(self.runs, complete), start=1):
                if skip:
                    progress.note(f"run {k}/{len(self.runs)} {spec.name}: already complete "
                                  f"({self.output(spec)}), skipped")
                else:
                    todo.append((k, spec))
            if jobs <= 1:
                for k, spec in todo:
                    one(k, spec, config_of(spec), progress, quiet)
            else:
                self._side_by_side(todo, config_of, progress, quiet, jobs, one)
        return [(spec, "skipped" if skip else failed.get(spec.name, "ok"))
                for spec, skip in zip(self.runs, complete)]

    def _side_by_side(self, todo, config_of, progress, quiet, jobs, one):
        """The runs of TODO, JOBS at a time on threads. Signals reach the main thread only:
        it asks every run to stop (each forwards the signal to its process group and seals
        its file) and raises the first run's Interrupted once all have stopped."""
        stop = process.StopEvent()
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
        # The longest first (by estimate, else time-out, which grows with a simulated node
        # count): a long run started last would finish alone.
        todo = sorted(todo, key=lambda ks: -(ks[1].estimate or ks[1].timeout or 0))
        # A worker takes the next run as soon as one fails, before this thread wakes to
        # cancel the rest: each run checks first that none has failed or been stopped.
        halt = threading.Event()

        def guarded(k, spec):
            if halt.is_set() or stop.is_set():
                return
            try:
                one(k, spec, config_of(spec), progress, quiet, stop)
            except BaseException:
                halt.set()
                raise
        futures = [pool.submit(guarded, k, spec) for k, spec in todo]
        saved = process.trap_termination()
        try:
            try:
                concurrent.futures.wait(futures, return_when=concurrent.futures.FIRST_EXCEPTION)
            except process.INTERRUPTIONS as e:
                stop.request(process.signum_of(e))
            for f in futures:
                f.cancel()   # not started: after a failure or a signal, none starts
            concurrent.futures.wait(futures)
        finally:
            pool.shutdown(wait=True)
            process.restore_termination(saved)
        errors = [f.exception() for f in futures if not f.cancelled() and f.exception()]
        interrupted = [e for e in errors if isinstance(e, Interrupted)]
        if interrupted or errors:
            raise (interrupted or errors)[0]

    def _one(self, k, spec, config, progress, quiet, stop=None):
        out = self.output(spec)
        partial = Path(str(out) + ".partial")
        # A rerun continues an interrupted run: its points are kept, the others measured.
        kept = None if config.restart else keepable(partial, lambda m: self._made_as(spec, m))
        written = rest_output(out).with_name(rest_output(out).name + ".partial") if kept else partial
        asked = self._asked.get(str(config.bench))
        mca, env = transport.handed(
            asked.settings() if asked and config.asks_transport(spec) else None)
        plan = config.plan(spec, self.bench_argv(spec, quiet, kept), mca)
        side = sidecar_path(out)
        record = {"run": spec.name, "campaign": self.name, "bench": str(config.bench),
                  **plan.to_dict(), "timeout_s": spec.timeout, "start": _now(), "status": "running",
                  "pid": os.getpid(), "host": socket.gethostname(), **({"resumed_from_point": kept.points} if kept else {})}
        side.write_text(json.dumps(record, indent=1) + "\n")
        if kept:
            progress.note(f"run {k}/{len(self.runs)} {spec.name}: resumed: {kept.points} point(s) "
                          f"of {partial} kept, the others measured (--restart measures all)")

        bar = progress.start(k, len(self.runs), spec.name)
        try:
            outcome = process.execute(
                plan.argv, timeout=spec.timeout,
                on_stdout=(lambda line: None) if quiet else progress.echo,
                on_stderr=lambda line: progress.echo(line, err=True),
                on_progress=lambda done, total: progress.update(bar, done, total),
                env=dict(os.environ, JOSTLE_LAUNCH_LINE=plan.line, **env),  # the meta line's
                stop=stop)
        except process.RunInterrupted as e:
            self._close(side, record, e.outcome)
            # signal: what the ranks got (a launcher may forward another), jostle_signal: ours
            seal(written, "interrupted", signal=e.signum, jostle_signal=e.signum)
            if kept:
                splice(kept, written, partial)
            progress.finish(bar, "interrupted")
            err = Interrupted(
                f"{e}: run '{spec.name}' is incomplete; the {_count_points(partial)} "
                f"point line(s) it measured are in {partial}. Run the same command again to resume "
                "(completed runs are kept).")
            err.exit_status = e.exit_status
            raise err from None
        self._close(side, record, outcome)
        if outcome.status != "ok":
            why = "exceeded its time-out" if outcome.status == "timeout" else "failed"
            seal(written, "error", message=f"the run {why} (exit status {outcome.returncode})")
        if kept and splice(kept, rest_output(out) if outcome.status == "ok" else written,
                           out if outcome.status == "ok" else partial) and outcome.status == "ok":
            partial.unlink()
        # A complete run must also be a valid one; its headline closes its line.
        done = read_lines(out) if outcome.status == "ok" and out.exists() else None
        progress.finish(bar, outcome.status, done.headline if done else "")

        if outcome.status == "timeout":
            raise RunTimeout(
                f"run '{spec.name}' exceeded its time-out of {spec.timeout:.0f} s (it hung, or is "
                f"much slower than expected) and was stopped; the points measured so far are in "
                f"{partial} ({_count_points(partial)} point lines). Raise --timeout or shrink --sizes.")
        if outcome.status == "failed" and outcome.usage_error:
            # the ranks refused their input: one line, as jostle's own usage errors
            raise UsageError(f"run '{spec.name}': {outcome.usage_error}")
        if outcome.status != "ok":
            msg = (f"run '{spec.name}' failed (exit status {outcome.returncode})"
                   + (f":\n{outcome.stderr_tail}" if outcome.stderr_tail else ""))
            if partial.exists():
                msg += f"\nthe points measured so far are in {partial} ({_count_points(partial)} point lines)"
            # jostle-bench exits 2 when it rejects its arguments: a usage error for us too.
            raise (UsageError if outcome.returncode == 2 else JostleError)(msg)
        if not out.exists():
            raise JostleError(f"run '{spec.name}' exited 0 but wrote no {out}"
                              + (f" (a {partial.name} is there)" if partial.exists() else ""))

    @staticmethod
    def _close(side, record, outcome):
        record.update(status=outcome.status, returncode=outcome.returncode, end=_now(),
                      elapsed_s=round(outcome.elapsed_s, 3))
        try:
            side.write_text(json.dumps(record, indent=1) + "\n")
        except OSError:
            pass
