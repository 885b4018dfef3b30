"""Rank and progress-thread placement (Taboada, COMPAS 2016), as `jostle place --ranks` shows
it. The decisions are jostle-bench's (`--place-ranks`, include/jostle/placement.h); this
module draws them as the seed's figures 1 and 2 do and writes what launchers take."""

import socket

from ..records import benchmarks
from ..binary import ask

RANK_POLICIES = benchmarks.choices("overlap", "policy")
PROGRESS_POLICIES = ("bind", "next", "numa")


def nic_locality(nic: dict) -> str:
    """'NUMA node 1', 'NUMA nodes 0,1' (a NIC above several: each is near) or 'unknown NUMA node'."""
    nodes = nic.get("numa_set") or ([] if nic.get("numa") is None else [nic["numa"]])
    if not nodes:
        return "unknown NUMA node"
    return f"NUMA node{'s' if len(nodes) > 1 else ''} " + ",".join(map(str, nodes))


def query(bench, ranks: str, policy: str, progress: str, topology=None) -> dict:
    """{"cores", "numa_cores", "pu_os", "rows": [{"ranks", "rank_cores", "progress_cores"}]}."""
    args = ["--place-ranks", "--ranks", ranks, "--policy", policy, "--progress", progress]
    return ask(bench, *args, *(["--topology", topology] if topology else []))


def draw(p: dict) -> str:
    """One row per rank count, cores as columns grouped by NUMA node: the ranks (figure 1)
    on the first line, their progress threads (figure 2) on the second."""
    order = [c for node in p["numa_cores"] for c in node]
    cells = []
    for row in p["rows"]:
        r = {c: "" for c in order}
        t = {c: "" for c in order}
        for k, (rc, pc) in enumerate(zip(row["rank_cores"], row["progress_cores"])):
            r[rc] += ("," if r[rc] else "") + str(k)
            t[pc] += ("," if t[pc] else "") + str(k)
        cells.append((row["ranks"], r, t))
    width = max([len(str(c)) for c in order] + [len(x) for _, r, t in cells
                                                 for x in (*r.values(), *t.values())])

    def line(label, vals):
        groups = [" ".join(f"{vals(c):>{width}}" for c in node) for node in p["numa_cores"]]
        return f"{label:<14}| " + " | ".join(groups) + " |"

    out = [line("core", str), line("NUMA node", lambda c: str(next(
        k for k, node in enumerate(p["numa_cores"]) if c in node)))]
    out.append("-" * len(out[0]))
    for n, r, t in cells:
        out.append(line(f"{n} ranks", lambda c, r=r: r[c] or "."))
        out.append(line("  progress", lambda c, t=t: t[c] or "."))
    return "\n".join(out)


def launcher_files(p: dict, host: str = "") -> dict:
    """For the last row: an Open MPI rankfile (logical cores; a rank gets its core and its
    progress thread's), SLURM --cpu-bind lists and an MPICH hydra -bind-to user list (OS PU
    numbers, which those take)."""
    row = p["rows"][-1]
    host = host or socket.gethostname()
    pu = p["pu_os"]
    pairs = list(zip(row["rank_cores"], row["progress_cores"]))
    rankfile = "".join(f"rank {k}={host} slot={rc}{'' if pc == rc else f',{pc}'}\n"
                       for k, (rc, pc) in enumerate(pairs))
    masks = ",".join(hex((1 << pu[rc]) | (1 << pu[pc])) for rc, pc in pairs)
    return {
        "ranks": row["ranks"],
        "rankfile": rankfile,
        "slurm": f"--cpu-bind=map_cpu:{','.join(str(pu[rc]) for rc, _ in pairs)}",
        "slurm_with_progress": f"--cpu-bind=mask_cpu:{masks}",
        "mpich": "-bind-to user:" + ",".join(
            str(pu[rc]) if rc == pc else f"{pu[rc]}+{pu[pc]}" for rc, pc in pairs),
    }
