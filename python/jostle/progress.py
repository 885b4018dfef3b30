"""A one-line progress bar on stderr, fed by the `progress D T` lines of the run.

On a terminal the bar redraws in place and is cleared before any other output
(the child's table on stdout, its messages on stderr) so lines never interleave.
Elsewhere (CI logs, pipes) only one line per run start and end is written.
"""

import sys
import threading
import time


class Progress:
    def __init__(self, stream=None, live=None, width=28):
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.width = width
        self.lock = threading.Lock()
        self.label, self.done, self.total, self.t0, self.shown = "", 0, 0, time.monotonic(), False

    def start(self, index, count, name):
        with self.lock:
            self.label = f"run {index}/{count} {name}"
            self.done = self.total = 0
            self.t0 = time.monotonic()
            if not self.live:
                self._write(f"jostle: {self.label}: started\n")
            else:
                self._draw()

    def update(self, done, total):
        with self.lock:
            self.done, self.total = done, total
            if self.live:
                self._draw()

    def echo(self, text, stream=None):
        """Print a line of someone else's output without tearing the bar."""
        with self.lock:
            self._clear()
            out = stream or sys.stdout
            out.write(text + "\n")
            out.flush()
            if self.live and self.label:
                self._draw()

    def note(self, text):
        self.echo(f"jostle: {text}", self.stream)

    def finish(self, status):
        with self.lock:
            self._clear()
            secs = time.monotonic() - self.t0
            pts = f", {self.done}/{self.total} points" if self.total else ""
            self._write(f"jostle: {self.label}: {status}{pts}, {secs:.1f} s\n")
            self.label = ""

    def render(self) -> str:
        frac = self.done / self.total if self.total else 0.0
        fill = int(round(frac * self.width))
        secs = int(time.monotonic() - self.t0)
        count = f"{self.done}/{self.total}" if self.total else "starting"
        return (f"{self.label} [{'#' * fill}{'.' * (self.width - fill)}] {count} "
                f"{frac * 100:3.0f}% {secs // 60:02d}:{secs % 60:02d}")

    def _draw(self):
        self._write("\r" + self.render() + "\x1b[K")
        self.shown = True

    def _clear(self):
        if self.shown:
            self._write("\r\x1b[K")
            self.shown = False

    def _write(self, s):
        self.stream.write(s)
        self.stream.flush()
