"""A run file's lines, judged as load_run judges them (results.scan), without the DataFrame
load_run builds: what a command reads that only sums a run up (a finished launch's headline,
whether a run is complete, the summary over a setting's launches). pandas' import is 0.4 s of
CPU, a tenth of a three-launch `jostle pingpong` on 2 cores."""

from dataclasses import dataclass
from pathlib import Path

from ..errors import JostleError
from . import results
from .run_meta import headline


@dataclass
class Lines:
    path: Path
    meta: dict
    rows: list          # the point lines, each as a row of load_run's frame
    param_names: list

    @property
    def benchmark(self) -> str:
        return self.meta.get("benchmark", "?")

    @property
    def headline(self) -> str:
        return headline(self.benchmark, self.rows)


def read(path) -> Lines:
    """A complete run file (IncompleteRunError, RecordError as load_run raises them)."""
    meta, rows, _, _, params = results.judged(Path(path))
    return Lines(Path(path), meta, rows, params)


@dataclass
class FileState:
    """What a record file is, judged by load_run alone: every command asks this."""
    state: str         # "complete", "partial" (loads, but incomplete) or "damaged"
    points: int = 0    # point lines it holds (0 when damaged)
    problem: str = ""  # why it is not complete


def file_state(path) -> FileState:
    """Complete only if it loads complete; partial if it loads with --allow-incomplete."""
    try:
        _, rows, _, problem, _ = results.scan(path)
    except results.IncompleteRunError as e:     # a cut first line: nothing measured
        return FileState("partial", e.points, e.reason)
    except JostleError as e:
        return FileState("damaged", 0, str(e))
    return FileState("partial" if problem else "complete", len(rows), problem)
