"""Campaign progress on stderr, drawn by rich: runs done of the total, the points of the
current run (from jostle-bench's `progress D T` lines), time elapsed and an estimate of the
time left.

On a terminal two bars stay under the output while a campaign runs; whatever else is
printed meanwhile (the child's table and messages, notes) goes through rich's console so it
lands above them. In a pipe or a CI log nothing is redrawn: one line per run, when it ends.
The estimate is rich's: the campaign's completed fraction (runs done plus the current run's
share of points) over the time it took, from the runs measured here, not the ones skipped.
"""

import contextlib
import sys
import threading

from rich.console import Console
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as _Bars


class Progress:
    def __init__(self, stream=None, live=None):
        """LIVE: draw bars (default: when STREAM, stderr by default, is a capable terminal)."""
        self.stream = stream or sys.stderr
        self.console = Console(file=self.stream, force_terminal=live, highlight=False)
        self.live = self.console.is_terminal and not self.console.is_dumb_terminal
        self._elapsed, self._left = TimeElapsedColumn(), TimeRemainingColumn()
        self._bars = _Bars(TextColumn("{task.description}"), BarColumn(),
                           TextColumn("{task.fields[count]}"), self._elapsed,
                           TextColumn("elapsed,"), self._left, TextColumn("left"),
                           console=self.console, transient=True, disable=not self.live,
                           redirect_stdout=False, redirect_stderr=False,  # see echo()
                           speed_estimate_period=float("inf"))  # the whole campaign's pace
        self._campaign = self._bars.add_task("campaign", total=0, start=False, count="")
        self._lock = threading.Lock()
        self.runs_done = self.runs_total = 0
        self._expected = 0   # runs announced by expect() and not yet added by campaign()
        self._running = []   # the runs started and not finished (several: simulated --jobs)

    def expect(self, runs):
        """Announce RUNS before they are added: a command made of several campaigns
        (`jostle run`) knows its whole total, and so its estimate, from the first run on."""
        with self._lock:
            self._expected += runs
            self.runs_total += runs

    @contextlib.contextmanager
    def campaign(self, runs, done=0):
        """Add RUNS to the campaign (DONE of them already complete) and show the bars while
        they run; runs announced by expect() are not counted twice."""
        with self._lock:
            taken = min(runs, self._expected)
            self._expected -= taken
            self.runs_total += runs - taken
            self.runs_done += done
            self._bars.update(self._campaign, total=self.runs_total, completed=self.runs_done,
                              count=self._runs_count())
            self._bars.start_task(self._campaign)
        # Not even a disabled display is started off a terminal: rich 13.3 (Debian 12's) would
        # write an empty line to the log when it stops.
        with self._bars if self.live else contextlib.nullcontext():
            yield self

    def start(self, index, count, name) -> "RunProgress":
        """A run begins: its own bar; the handle update() and finish() take."""
        with self._lock:
            run = RunProgress(f"run {index}/{count} {name}")
            run.task = self._bars.add_task(run.label, total=None, count="starting")
            self._running.append(run)
            return run

    def update(self, run, done, total):
        with self._lock:
            run.points = (done, total)
            self._bars.update(run.task, total=total, completed=done,
                              count=f"{done}/{total} points")
            self._bars.update(self._campaign, completed=self._completed())

    def finish(self, run, status, headline=""):
        """One line for the run that ended: its status, points and time, the campaign's, and
        the HEADLINE values of the run."""
        with self._lock:
            self.runs_done += status == "ok"   # a failed run stops the campaign, undone
            self._running.remove(run)
            self._bars.update(self._campaign, completed=self._completed(),
                              count=self._runs_count())
            elapsed, camp = self._task(run.task).elapsed, self._task(self._campaign)
            self._bars.remove_task(run.task)
            done, total = run.points
            pts = f", {done}/{total} points" if total else ""
            left = ("" if camp.finished or camp.time_remaining is None
                    else f", about {self._left.render(camp)} left")
            line = (f"jostle: {run.label}: {status}{pts}, {elapsed or 0:.1f} s "
                    f"({self._runs_count()} in {self._elapsed.render(camp)}{left})"
                    + (f": {headline}" if headline else ""))
        self.console.out(line)

    def echo(self, text, err=False):
        """Print a line of the child's output: stdout's, or stderr's with ERR.

        While the bars are drawn, a line for the same terminal goes through rich's console
        (on stderr) so it is printed above them; stdout redirected elsewhere is written as is
        (rich's own stdout redirection would send a redirected table to the terminal)."""
        if err or (self.live and sys.stdout.isatty()):
            self.console.out(text)
        else:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    def note(self, text):
        self.echo(f"jostle: {text}", err=True)

    def _completed(self):
        """Runs done plus the share of points of each run under way."""
        return self.runs_done + sum(d / max(t, 1) for d, t in (r.points for r in self._running))

    def _runs_count(self):
        return f"{self.runs_done}/{self.runs_total} runs"

    def _task(self, task_id):
        return next(t for t in self._bars.tasks if t.id == task_id)


class RunProgress:
    """One run's line: its label, its points so far, its bar."""

    def __init__(self, label):
        self.label, self.points, self.task = label, (0, 0), None
