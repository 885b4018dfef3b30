"""The kind of pages of every buffer (--pages system|base|huge): what each run records it
obtained (read back from /proc/self/smaps), bad input, and the figure of what the kind costs."""

import re
from pathlib import Path

import pytest

from jostle.cli import main
from jostle.records.results import load_run

from mpijobs import run_bench, validate

pytestmark = pytest.mark.mpi


def thp():
    """This machine's transparent huge pages setting (always, madvise or never); None unknown."""
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return None
    m = re.search(r"\[(\w+)\]", text)
    return m.group(1) if m else None


def comm_buffers(run):
    return [b["comm"] for b in run.meta["binding"].values()]


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
@pytest.mark.parametrize("kind", ["base", "huge"])
def test_the_kind_asked_is_recorded_with_what_the_kernel_gave(tmp_path, flavor, kind):
    if kind == "huge" and thp() in (None, "never"):
        pytest.skip(f"transparent huge pages are '{thp()}' on this machine")
    out = tmp_path / "r.jsonl"
    # 1 MiB stream: an arena of 2 x 1 MiB per rank, within one 2 MiB page when huge
    p = run_bench("pingpong", "--mode", "stream", "--window", "4", "--sizes", "1M", "--pages",
                  kind, "--check", "--min-reps", "5", "--max-time", "0.05", out=out,
                  flavor=flavor)
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    assert r.meta["harness"]["pages"] == kind
    for b in comm_buffers(r):
        assert b["pages"] == kind
        if kind == "base":   # refused: none of the buffer lies on a huge page
            assert b["huge_bytes"] == 0, b
        else:                # asked for on a 2 MiB-aligned mapping: the whole buffer
            assert b["huge_bytes"] == 2 << 20, b
            assert "mem_note" not in b, b


def test_system_pages_are_what_a_page_aligned_buffer_gets(tmp_path):
    out = tmp_path / "r.jsonl"
    p = run_bench("pingpong", "--sizes", "4K", "--min-reps", "5", "--max-time", "0.05", out=out)
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    assert r.meta["harness"]["pages"] == "system"
    for b in comm_buffers(r):
        assert b["pages"] == "system" and isinstance(b["huge_bytes"], int)
        if thp() != "always":   # madvise or never: a buffer nobody asked for stays on base pages
            assert b["huge_bytes"] == 0, b


@pytest.mark.unit
@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_a_kind_of_pages_outside_the_list_exit_2(tmp_path, flavor):
    """Refused before MPI starts (--validate: no launch)."""
    out = tmp_path / "x.jsonl"
    p = validate("pingpong", "--sizes", "4", "--pages", "giant", "--output", out, flavor=flavor)
    assert p.returncode == 2 and "'giant'" in p.stderr, p.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.unit
def test_cli_names_a_single_kind_apart_from_the_default(capsys, tmp_path):
    """A run with --pages huge (or --buffers cold) is not the default run of the same command:
    its name's hash differs, so resuming one never takes the other for complete."""
    names = []
    for extra in ([], ["--pages", "huge"], ["--buffers", "cold"]):
        assert main(["pingpong", "--sizes", "4", "--output-dir", str(tmp_path), "--dry-run",
                     *extra]) == 0
        text = capsys.readouterr()
        names.append(re.search(r"pingpong-intra-pingpong-[0-9a-f]{8}", text.out + text.err)[0])
    assert len(set(names)) == 3, names


@pytest.mark.slow
def test_cli_runs_each_kind_and_draws_what_it_costs(tmp_path, capsys, monkeypatch, built):
    if thp() in (None, "never"):
        pytest.skip(f"transparent huge pages are '{thp()}' on this machine")
    bench = built()
    monkeypatch.delenv("JOSTLE_BENCH", raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    argv = ["pingpong", "--mpi", "openmpi", "--bench", str(bench), "--mode", "stream",
            "--window", "4", "--pages", "system,huge", "--sizes", "64K,1M", "--min-reps", "5",
            "--max-time", "0.05", "--output-dir", str(tmp_path), "--campaign", "p",
            "--timeout", "120", "--runs", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    camp = tmp_path / "p"
    for kind in ("system", "huge"):
        [run] = camp.glob(f"pingpong-intra-stream-*-{kind}.jsonl")
        assert load_run(run).meta["harness"]["pages"] == kind
    fig = camp / "figures" / "pingpong-buffers-stream.png"
    assert fig.exists() and str(fig) in out
    # advice pairs the two runs that differ by their pages only, size by size
    from jostle.analysis.advise import pages_advice
    [item] = pages_advice([load_run(f) for f in camp.glob("*.jsonl")])
    assert item["topic"] == "huge pages" and item["text"].startswith("intra-node stream")
    ratios = item["numbers"]["ratio_by_size"]
    assert sorted(ratios) == [64 << 10, 1 << 20] and all(v > 0 for v in ratios.values())
