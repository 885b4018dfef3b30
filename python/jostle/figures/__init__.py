"""Figures, one module per benchmark: jostle.figures.<benchmark>.build(runs).

A benchmark's module is found by its name, so a new benchmark adds its figures
by adding a module here, nothing else. build() returns Figure objects; saving
them (PNG, SVG) or embedding them in the report is done here, once.
"""

import base64
import functools
import importlib
import inspect
import io
from dataclasses import dataclass
from pathlib import Path

from .. import lazy
from ..analysis import launches
from ..records import repeats
from ..records.run_meta import multimodal_points
from ..units import size_label


def _agg():
    """Figures are files, never windows: works on a headless node."""
    import matplotlib
    matplotlib.use("Agg")


# matplotlib is imported when a figure is first drawn, not by every command that imports us.
plt = lazy.module("matplotlib.pyplot", before=_agg)
ticker = lazy.module("matplotlib.ticker", before=_agg)
patches = lazy.module("matplotlib.patches", before=_agg)
mpl_figure = lazy.module("matplotlib.figure", before=_agg)
np = lazy.module("numpy")
pd = lazy.module("pandas")

FORMATS = ("png", "svg")
DPI = 110   # the files and the page alike: a PNG saved for one serves the other (report.render)


@dataclass
class Figure:
    id: str          # file stem, e.g. pingpong-pow2
    title: str
    caption: str
    fig: object      # a matplotlib Figure


def module_for(benchmark: str):
    """The figure module of BENCHMARK, or None when it has none yet."""
    try:
        return importlib.import_module(f"{__name__}.{benchmark.replace('-', '_')}")
    except ModuleNotFoundError:
        return None


# Studies made of other benchmarks' runs, named <study>-…: their module draws those runs
# (instead of the benchmark's module) and may add report tables.
STUDIES = ("nuioa",)


def study_of(run):
    return next((s for s in STUDIES if run.name.startswith(s + "-")), None)


def build(runs, statistic=None) -> list:
    """Every figure for RUNS, grouped by benchmark (or study) in order of first appearance.
    STATISTIC (a percentile column, "p99") goes to the modules that draw one."""
    by_bench = {}
    for r in runs:
        by_bench.setdefault(study_of(r) or r.benchmark, []).append(r)
    figures = []
    for bench, group in by_bench.items():
        mod = module_for(bench)
        if mod is not None:
            takes = statistic and "statistic" in inspect.signature(mod.build).parameters
            built = mod.build(group, statistic=statistic) if takes else mod.build(group)
            note = _modes_note(group)
            for f in built:   # every figure of these runs says so, whatever it draws
                f.caption = f"{f.caption} {note}" if note else f.caption
            figures.extend(built)
    return figures


def _modes_note(runs) -> str:
    """'3 point(s) of these runs have two or more modes …', or '' (docs/statistics.md)."""
    count = sum(len(multimodal_points(r)) for r in runs)
    return (f"{count} point(s) of these runs have two or more modes: their median lies between "
            "them and describes neither (the modes are in the records and the report's "
            "warnings).") if count else ""


def pooled(draw):
    """DRAW(runs, ...) (a module's build or tables) on RUNS with the jobs of one setting
    (--runs K) pooled (repeats.pool): one line, bar or row per setting, and every caption
    says what the pooled values and intervals are."""
    @functools.wraps(draw)
    def pooled_draw(runs, *args, **kwargs):
        runs = repeats.pool(runs)
        out = draw(runs, *args, **kwargs)
        note = jobs_note(runs)
        for f in out if note else ():
            if isinstance(f, dict):   # a report table
                f["caption"] = f"{f['caption']} {note}"
            else:
                f.caption = f"{f.caption} {note}"
        return out
    return pooled_draw


def jobs_note(runs) -> str:
    """'Each setting pools its 3 MPI jobs …' for pooled RUNS, or '' when each is one job."""
    ks = sorted({r.jobs for r in runs if r.jobs > 1})
    if not ks:
        return ""
    k = str(ks[0]) if len(ks) == 1 else f"{ks[0]}-{ks[-1]}"
    return (f"Each setting pools its {k} MPI jobs (--runs), the job as the unit: a median is "
            "the geometric mean of the jobs' medians and its error bar the 95% confidence "
            "interval of it over the jobs (Student's t on the log scale, as `jostle compare`); "
            "the range of the jobs' medians (lowest to highest job) is drawn apart where the "
            "figure draws it (grey ticks); other statistics (p25-p75 band, p99) are a typical "
            "job's, the median over the jobs.")


def between_note(runs, metrics=("latency", "bandwidth"), named=3) -> str:
    """' 2 point(s) vary between launches beyond their own intervals: NAME latency 8 B: varies
    between launches: 0.4-0.6 us; …' for the METRICS of pooled RUNS (the first NAMED; by
    default the communication's, which the figures of the studies built on point-to-point
    draw), or '' where none does (repeats.between; the words are analysis.launches.note's)."""
    found = []
    for r in runs:
        df = r.points
        if r.jobs <= 1 or df.empty or "between" not in df:
            continue
        apart = (df["between"].fillna("").astype(str) != "") & df["metric"].isin(metrics)
        for _, p in df[apart].iterrows():
            where = [size_label(p["size"]) if pd.notna(p.get("size")) else "",
                     p.get("phase") if isinstance(p.get("phase"), str) else ""]
            found.append(" ".join([r.name, str(p["metric"]), *filter(None, where)]) + ": "
                         + launches.note("varies", p.get("unit") or "",
                                         [p["jobs_lo"], p["jobs_hi"]]))
    if not found:
        return ""
    more = f"; {len(found) - named} more in the summaries" if len(found) > named else ""
    return (f" {len(found)} point(s) vary between launches beyond their own intervals: "
            + "; ".join(found[:named]) + more + ".")


def save(figures, outdir, formats=FORMATS) -> list:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for f in figures:
        for ext in formats:
            p = outdir / f"{f.id}.{ext}"
            f.fig.savefig(p, dpi=DPI, bbox_inches="tight")
            paths.append(p)
    return paths


def caveats_footer(fig, notes):
    """The run caveats (oversubscribed, one NUMA node, …) under the figure, in grey: facts of
    the machine, not errors (issue 49), and the layout that leaves room for them."""
    if notes:
        fig.text(0.01, 0.005, "Caveats: " + "; ".join(notes), color="dimgray",
                 fontsize=8, ha="left", va="bottom", wrap=True)
    fig.tight_layout(rect=(0, 0.04 if notes else 0, 1, 1))
    return fig


def write(figures, outdir, formats=FORMATS) -> list:
    """Saves FIGURES under OUTDIR and frees them, even on failure; returns the paths."""
    try:
        return save(figures, outdir, formats)
    finally:
        close(figures)


def png_base64(fig, saved=None) -> str:
    """FIG as a page embeds it; SAVED: its PNG file, already rendered by save()."""
    if saved is not None:
        data = Path(saved).read_bytes()
    else:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
        data = buf.getvalue()
    return base64.b64encode(data).decode("ascii")


def compressed_png(data: bytes) -> bytes:
    """PNG DATA with its colours reduced to a palette of 256 (a figure's flat colours and
    anti-aliased lines lose nothing a reader sees) and deflated at the highest level: 3-4x
    fewer bytes than matplotlib's RGBA; DATA itself when that is smaller."""
    from PIL import Image
    img = Image.open(io.BytesIO(data)).convert("RGB")
    buf = io.BytesIO()
    img.quantize(256, method=Image.Quantize.MEDIANCUT).save(buf, format="png", optimize=True)
    return buf.getvalue() if buf.tell() < len(data) else data


def smallest(fig, png=None, svg=None) -> tuple:
    """(MIME type, bytes) of FIG as a page embeds it: the compressed PNG or the SVG, whichever
    is fewer bytes. PNG, SVG: its files already saved by save(), else drawn here."""
    def drawn(path, fmt):
        if path is not None:
            return Path(path).read_bytes()
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=DPI, bbox_inches="tight")
        return buf.getvalue()
    small_png, vector = compressed_png(drawn(png, "png")), drawn(svg, "svg")
    return (("image/svg+xml", vector) if len(vector) < len(small_png)
            else ("image/png", small_png))


def close(figures):
    for f in figures:
        plt.close(f.fig)
