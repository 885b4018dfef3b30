"""`jostle scan`'s runs: the fingerprint of each node, the link run, and the probes that tell
a dead node from a failed run, as studies/scan.py plans them (commands/scan.py parses, judges
and reports; docs/scan.md)."""

import hashlib
import os
from pathlib import Path

from ..run import process
from ..run.campaign import Campaign, Failure, RunSpec
from ..errors import JostleError
from ..studies import scan as study
from . import _common

PROBE_TIMEOUT = 30.0


def settings_of(args) -> study.Settings:
    """The scan's options as the study's typed settings (a study never sees the namespace)."""
    return _common.settings(study.Settings, args)


# ---------------------------------------------------------------- running

def _probe(config_of, hosts) -> dict:
    """Which of HOSTS answer a one-rank launch of `jostle-bench --version` in time."""
    dead = {}
    for h in hosts:
        spec = RunSpec("probe", "--version", [], 1, [h])
        plan = config_of(spec).plan(spec, ["--version"])
        try:
            out = process.execute(plan.argv, timeout=PROBE_TIMEOUT, on_stdout=lambda line: None)
        except JostleError as e:
            out = Failure(str(e), False)
        if not getattr(out, "status", None) == "ok":
            dead[h] = f"no answer to a one-rank launch within {PROBE_TIMEOUT:g} s"
    return dead


def run_fingerprints(args, camp_dir, hosts, config_of, progress, suffix="", sets=None) -> dict:
    """Runs every node's fingerprint, a benchmark at a time (a node that did not answer the
    first is not asked again; SETS: {host: working sets to build}); returns {host: (why, run
    file)} of the unreachable."""
    dead = {}
    settings = settings_of(args)
    for bench in study.FP_SHARES:
        runs = study.fingerprint_runs(settings, [h for h in hosts if h not in dead], bench, suffix,
                                      sets)
        camp = Campaign(camp_dir, runs)
        done = camp.run(config_of, progress, quiet=True,
                        jobs=args.fingerprint_jobs or len(hosts), keep_going=True)
        for spec, status in done:
            if isinstance(status, Failure):
                lines = status.message.splitlines()
                why = ("no answer before the time-out" if status.timeout
                       else "its run failed: " + (lines[1] if len(lines) > 1 else lines[0])[:200])
                dead[spec.hosts[0]] = (why, str(camp.output(spec)) + ".partial")
        # Every node lost on the first pass: the launch, not the nodes; say so instead of N
        # suspects. (A node measured again, -again, that no longer answers is unreachable.)
        if len(dead) == len(hosts) and not suffix:
            h, (why, _) = next(iter(dead.items()))
            raise JostleError(f"no node could be measured ({h}: {why}); inside SLURM, ask for "
                              "two tasks per node (salloc -N N --ntasks-per-node=2)")
    return dead


def run_links(args, camp_dir, hosts, config_of, progress, dead, suffix="", shifts_for=None,
              pairs=None) -> "Path | None":
    """The link run over HOSTS (SHIFTS_FOR(n): its rounds for n hosts; PAIRS: (file, rounds)
    instead); when it fails, the hosts that do not answer are added to DEAD and it is run
    again without them (not with PAIRS, whose ranks are HOSTS'). Returns the complete run
    file, or None."""
    settings = settings_of(args)
    while len(hosts) >= 2:
        spec = study.link_run(settings, hosts,
                              shifts=shifts_for(len(hosts)) if shifts_for else None,
                              pairs=pairs[0] if pairs else None,
                              nrounds=pairs[1] if pairs else None)
        spec.name += suffix
        camp = Campaign(camp_dir, [spec])
        [(_, status)] = camp.run(config_of, progress, quiet=True, keep_going=True)
        if not isinstance(status, Failure):
            return camp.output(spec)
        lost = _probe(config_of, hosts)
        if not lost:
            raise JostleError(f"the link run failed and every host answers: {status.message}")
        for h, why in lost.items():
            dead[h] = (why, str(camp.output(spec)) + ".partial")
        if pairs:
            return None
        hosts = [h for h in hosts if h not in lost]
    return None


def fp_outputs(args, camp_dir, hosts, suffix="") -> dict:
    """{(host, benchmark): run file} of the fingerprints of HOSTS."""
    if args.parts == "links":
        return {}
    return {(s.hosts[0], s.benchmark): Campaign(camp_dir, []).output(s)
            for s in study.fingerprint_runs(settings_of(args), hosts, suffix=suffix)}


def pairs_file(camp_dir, rounds) -> Path:
    """The rounds (study.arrange_rounds) as jostle-bench shift --pairs reads them, in CAMP_DIR,
    named by content (the same rounds: the same file, and the run that measured them resumes)."""
    body = "".join(f"{q} {s} {d}\n" for q, s, d in rounds)
    path = Path(camp_dir) / f"pairs-{hashlib.sha1(body.encode()).hexdigest()[:10]}.txt"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, body)
    return path


def _write_atomic(path: Path, body: str):
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(body)
        os.replace(tmp, path)
    except OSError as e:
        raise JostleError(f"cannot write {path}: {e.strerror}") from None

