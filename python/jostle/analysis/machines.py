"""What names the kind of machine a run was made on (its CPU, cores, NUMA nodes, NICs and MPI
library): the key a baseline entry is filed under, the line a person reads, and what differs
between two machines, for comparisons, baselines, scans and checks alike."""

MACHINE = ("cpu", "cores", "numa_nodes", "nics")   # what a comparison refuses to mix


def machine_facts(meta: dict) -> dict:
    """What names the kind of machine a run was made on, and its MPI library (a baseline
    entry's key: one per library)."""
    m = meta.get("machine") or {}
    mpi = (meta.get("mpi") or {}).get("library") or ""
    return {"cpu": m.get("cpu"), "cores": m.get("cores"), "numa_nodes": m.get("numa_nodes"),
            "mpi": mpi.split(",")[0].strip() or None,
            "nics": sorted(f"{n.get('name')}@{n.get('link_gbps')}" for n in m.get("nics") or [])}


def _line(facts: dict, nics: list, mpi: bool) -> str:
    lib = f"{facts.get('mpi')} | " if mpi else ""
    return (f"{facts.get('cpu')} | {facts.get('cores')} cores | {facts.get('numa_nodes')} NUMA | "
            f"{lib}{','.join(nics) or 'no NIC'}")


def machine_key(facts: dict) -> str:
    return _line(facts, facts.get("nics") or [], True)


def machine_text(facts: dict, mpi=False) -> str:
    """The machine as a person reads it: 'CPU | 24 cores | 1 NUMA | mlx5_0@15.75', with MPI
    its library before the NICs; a NIC of unknown link speed by its name alone (machine_key
    keeps 'eth0@None': files hold it)."""
    return _line(facts, [n.removesuffix("@None") for n in facts.get("nics") or []], mpi)


def machine_differences(a: dict, b: dict) -> list:
    """What differs between two machines (CPU, cores, NUMA nodes, NICs); the MPI library is
    not the machine: runs are matched by it."""
    return [f"{k}: {a.get(k)} vs {b.get(k)}" for k in MACHINE if a.get(k) != b.get(k)]
