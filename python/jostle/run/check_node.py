"""What `jostle check` asks of the node itself (docs/check.md): is it busy with others' work,
what state are its NICs in; and what it leaves there: its record in the spool and the suspect
mark (the scheduler's state of the node is run/slurm.py's)."""

from __future__ import annotations

import datetime
import json
import os
import re
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import JostleError, UsageError
from .process import USAGE_PREFIX

# ---------------------------------------------------------------- busy

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_line():
    """(busy, total) jiffies of all CPUs from /proc/stat, steal left out of both (the host's,
    not this node's processes), and the number of tasks runnable now."""
    busy = total = 0
    running = 0
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu "):
                v = [int(x) for x in line.split()[1:]]
                v += [0] * (8 - len(v))
                user, nice, system, idle, iowait, irq, softirq = v[:7]
                busy = user + nice + system + irq + softirq
                total = busy + idle + iowait
            elif line.startswith("procs_running"):
                running = int(line.split()[1])
    return busy, total, running


def _processes() -> dict:
    """{pid: (uid, cpu jiffies)} of every process."""
    out = {}
    for d in os.scandir("/proc"):
        if not d.name.isdigit():
            continue
        try:
            with open(f"/proc/{d.name}/stat") as f:
                stat = f.read()
            uid = os.stat(f"/proc/{d.name}").st_uid
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        out[int(d.name)] = (uid, int(fields[11]) + int(fields[12]))
    return out


def _own_cpu() -> float:
    """CPU seconds of this process and of its children that were waited for (mpirun waits
    for its ranks: theirs is in it)."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


@dataclass
class Load:
    """What others did on the node over an interval."""
    seconds: float
    cores: int
    others_cores: float            # CPU used by processes not this check's, in cores
    runnable: float = 0.0          # tasks runnable besides this one (the median of samples)
    users: dict = field(default_factory=dict)   # {uid: cores} of other users' processes

    def to_dict(self) -> dict:
        return {"seconds": round(self.seconds, 2), "cores": self.cores,
                "others_cores": round(self.others_cores, 3), "runnable": self.runnable,
                "users": {str(k): round(v, 3) for k, v in self.users.items()}}


class LoadMeter:
    """Others' use of the node from start() to stop(): the CPU of all the node's processes
    (/proc/stat) less this check's own (getrusage of itself and the children it waited for),
    and by user the CPU of the processes of users other than this one from UID_MIN up."""

    def __init__(self, uid_min=1000):
        self.uid_min = uid_min
        self.cores = os.cpu_count() or 1
        self.runnable = []

    def start(self):
        self.t = time.monotonic()
        self.cpu = _cpu_line()
        self.own = _own_cpu()
        self.procs = _processes()
        self.runnable = []

    def sample(self):
        self.runnable.append(max(0, _cpu_line()[2] - 1))

    def stop(self, killed_cpu_s: float = 0.0) -> Load:
        """Others' use since start(); KILLED_CPU_S: the CPU of processes of this check that
        were killed without being waited for (watchdog.Watchdog.killed_cpu_s)."""
        dt = max(1e-3, time.monotonic() - self.t)
        busy, _, _ = _cpu_line()
        own = _own_cpu() - self.own + killed_cpu_s
        others = max(0.0, (busy - self.cpu[0]) / _TICK - own) / dt
        users = {}
        me = os.geteuid()
        for pid, (uid, cpu) in _processes().items():
            if uid >= self.uid_min and uid != me:
                before = self.procs.get(pid, (uid, 0))[1]
                users[uid] = users.get(uid, 0.0) + max(0, cpu - before) / _TICK / dt
        r = sorted(self.runnable)
        return Load(dt, self.cores, others, r[len(r) // 2] if r else 0.0,
                    {u: c for u, c in users.items() if c > 0})


def busy_now(seconds=0.5, uid_min=1000) -> Load:
    """Others' use of the node over the next SECONDS (this check doing nothing meanwhile)."""
    m = LoadMeter(uid_min)
    m.start()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        m.sample()
        time.sleep(seconds / 10)
    return m.stop()


def why_busy(load: Load, share: float, user_cores: float, before: bool) -> str:
    """Why LOAD makes the node busy, or "": other users' processes using USER_CORES or more;
    others using SHARE of the cores or more; before measuring, more runnable tasks than
    cores (a load above its cores)."""
    users = {u: c for u, c in load.users.items() if c >= user_cores}
    if users:
        return "other users' processes on its cores (" + ", ".join(
            f"uid {u}: {c:.2f} cores" for u, c in sorted(users.items())) + ")"
    if load.others_cores >= share * load.cores:
        return (f"others used {load.others_cores:.2f} of its {load.cores} cores "
                f"({'before' if before else 'while'} measuring)")
    if before and load.runnable > load.cores:
        return f"{load.runnable:g} tasks runnable on its {load.cores} cores"
    return ""


# ---------------------------------------------------------------- NICs

def nics(sys_root="/sys") -> dict:
    """{name: {state, speed_mbps}} of the node's NICs: network interfaces backed by a device
    (/sys/class/net/X/device: not lo, veth, bridges), state `up` or what operstate says,
    speed in Mb/s where the driver knows it; and each InfiniBand port as NAME/PORT, state
    `up` when ACTIVE, its rate (e.g. '100 Gb/sec (4X EDR)') in Mb/s."""
    out = {}
    net = Path(sys_root) / "class" / "net"
    for d in sorted(net.iterdir()) if net.is_dir() else ():
        if not (d / "device").exists():
            continue
        state = _read(d / "operstate") or "unknown"
        speed = _read(d / "speed")
        s = int(speed) if speed and speed.lstrip("-").isdigit() and int(speed) > 0 else None
        out[d.name] = {"state": state, **({"speed_mbps": s} if s else {})}
    ib = Path(sys_root) / "class" / "infiniband"
    for dev in sorted(ib.iterdir()) if ib.is_dir() else ():
        for port in sorted((dev / "ports").iterdir()) if (dev / "ports").is_dir() else ():
            state = _read(port / "state") or ""
            rate = re.match(r"\s*([0-9.]+)\s*Gb/sec", _read(port / "rate") or "")
            out[f"{dev.name}/{port.name}"] = {
                "state": "up" if "ACTIVE" in state else (state.split(":")[-1].strip().lower()
                                                        or "unknown"),
                **({"speed_mbps": int(float(rate.group(1)) * 1000)} if rate else {})}
    return out


def _read(path) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


# ---------------------------------------------------------------- the spool

def utc(t=None) -> str:
    t = datetime.datetime.now(datetime.timezone.utc) if t is None else \
        datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def spool_write(spool: Path, record: dict) -> Path:
    """RECORD as SPOOL/check-NODE-TIME-PID.json, written to a hidden temporary name and
    renamed: a reader never sees half of one."""
    stamp = re.sub(r"[^0-9TZ]", "", record.get("time", utc()))
    node = re.sub(r"[^A-Za-z0-9_.-]", "_", str(record.get("node")))
    path = spool / f"check-{node}-{stamp}-{os.getpid()}.json"
    tmp = spool / f".{path.name}.tmp"
    try:
        spool.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as e:
        raise JostleError(f"cannot write the check's record in {spool}: {e.strerror}") from None
    return path


# ---------------------------------------------------------------- suspect mode

def suspect_path(state_dir: Path, node: str) -> Path:
    return Path(state_dir) / f"suspect-{re.sub(r'[^A-Za-z0-9_.-]', '_', node)}.json"


def read_suspect(state_dir, node) -> "dict | None":
    try:
        return json.loads(suspect_path(state_dir, node).read_text())
    except (OSError, ValueError):
        return None


def mark_suspect(state_dir, node, line, record_path=None):
    path = suspect_path(state_dir, node)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"node": node, "since": utc(), "reason": line,
                                   "record": str(record_path) if record_path else None}) + "\n")
        os.replace(tmp, path)
    except OSError as e:
        raise JostleError(f"cannot keep the suspect mark in {state_dir}: {e.strerror}") from None


def clear_suspect(state_dir, node):
    try:
        suspect_path(state_dir, node).unlink()
    except FileNotFoundError:
        pass
    except OSError as e:
        raise JostleError(f"cannot clear the suspect mark in {state_dir}: {e.strerror}") from None


# ---------------------------------------------------------------- the bench, under a watchdog

def bench_json(run, bench, *args) -> dict:
    """jostle-bench's JSON answer to a query (--version, --machine), through RUN(argv, what)
    (a watchdog.Watchdog's run: a bench that hangs is killed at the check's limit)."""
    r = run([str(bench), *args], f"jostle-bench {' '.join(args)}")
    if r.status != "ok":
        raise JostleError(f"'{bench} {' '.join(args)}' failed ({r.status}): "
                          + (r.stderr.strip().splitlines() or [""])[-1][:300])
    try:
        return json.loads(r.stdout)
    except ValueError:
        raise JostleError(f"'{bench} {' '.join(args)}' did not print JSON") from None


def bench_validate(run, bench, benchmark, args):
    """`jostle-bench BENCHMARK --validate ARGS` through RUN: its refusal is bad input (exit
    2, its first line)."""
    r = run([str(bench), benchmark, "--validate", *map(str, args)], f"{benchmark} --validate")
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    if r.returncode == 2:
        raise UsageError(lines[0].removeprefix(USAGE_PREFIX) if lines else
                         f"jostle-bench {benchmark} refused its options")
    if r.status != "ok":
        raise JostleError(f"jostle-bench {benchmark} --validate failed ({r.status}): "
                          + (lines[-1] if lines else ""))
