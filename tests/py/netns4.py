"""N "hosts" on this machine for `jostle scan` (scripts/netns-hosts.sh with JOSTLE_NETNS_N):
namespaces on a bridge, faults put on them, and the scan command line that fits them. Used by
tests/py/test_scan_netns.py and bench/scan_targets.py."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "netns-hosts.sh"
BENCH = REPO / "build" / "openmpi" / "jostle-bench"
ROOT_OK = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# What a scan of these hosts gets: small budgets (a 2-core machine, shared), one node at a time
# (eight spinning ranks at once on two cores measure the scheduler), the ranks of the link run
# on cores 0 and 1 in turn, idle ranks yielding, 1 MiB under load (64 MiB ping-pongs take
# seconds each here), one compute thread per rank, and a minimum effect of 50%: on this
# machine healthy hosts differ by up to 30-40% from one run to the next. The links' latency is
# left out: four ranks on two cores put some pairs on one core, where a ping-pong waits for the
# scheduler (milliseconds, against 15 µs for a pair on two cores). A run may take 150 s past its
# budget before its host is unreachable: a host throttled to 30% of a core (`slow`) takes
# 15 s for what the others do in 4 s (its memlat's 128 MiB chain, its contention's phases),
# several times that on a loaded machine.
SCAN_ARGS = ["--budget", "4", "--load-sizes", "4,1M", "--round-time", "0.5", "--timeout", "150",
             "--link-metrics", "bandwidth",
             "--fingerprint-jobs", "1", "--compute-cores", "1", "--oversubscribe", "yes"]
MIN_EFFECT = 0.5


def unavailable(n=4) -> str:
    """Why N hosts cannot be made here, or ''."""
    if os.geteuid() != 0:
        return "not root: network namespaces need CAP_SYS_ADMIN"
    if not BENCH.exists():
        return f"{BENCH} is not built (make build)"
    if not (shutil.which("mpirun.openmpi") or shutil.which("mpirun")):
        return "no Open MPI mpirun on PATH"
    if not shutil.which("tc"):
        return "no tc (iproute2)"
    out = subprocess.run([str(SCRIPT), "check"], capture_output=True, text=True, timeout=60)
    return "" if out.returncode == 0 else "network namespaces unavailable: " + out.stdout.strip()


class Hosts:
    """N namespaces named PREFIX1..PREFIXN on NET.0/24, up while the object is used."""

    def __init__(self, n=4, prefix=None, net=None):
        tag = os.getpid() % 1000
        self.n = n
        self.prefix = prefix or f"js{tag}h"
        self.net = net or f"10.254.{tag % 250}"
        self.env = {**os.environ, **ROOT_OK, "JOSTLE_NETNS_N": str(n),
                    "JOSTLE_NETNS_PREFIX": self.prefix, "JOSTLE_NETNS_NET": self.net,
                    "JOSTLE_NETNS_TMP": f"/tmp/jostle-netns-{self.prefix}",
                    "JOSTLE_NETNS_YIELD": "1"}
        self.ips = [f"{self.net}.{i + 1}" for i in range(n)]

    def script(self, *args, timeout=60):
        out = subprocess.run([str(SCRIPT), *args], env=self.env, capture_output=True, text=True,
                             timeout=timeout)
        if out.returncode:
            raise RuntimeError(f"netns-hosts.sh {' '.join(args)}: {out.stderr.strip()[-500:]}")
        return out.stdout

    def __enter__(self):
        self.script("up")
        return self

    def __exit__(self, *exc):
        self.script("down")

    def heal(self):
        for ip in self.ips:
            self.script("heal", ip)

    def scan(self, out_dir, campaign, *extra, min_effect=MIN_EFFECT, timeout=900,
             background=False):
        """`jostle scan` of the hosts, flagging at MIN_EFFECT: its CompletedProcess (or Popen
        with BACKGROUND)."""
        cmd = [sys.executable, "-m", "jostle.cli", "scan", "--hosts", ",".join(self.ips),
               "--launcher", f"{SCRIPT} mpirun -np {{np}} --host {{hosts}}",
               "--comm-core", ",".join(str(i % 2) for i in range(self.n)),
               *SCAN_ARGS, "--min-effect", str(min_effect),
               "--output-dir", str(out_dir), "--campaign", campaign,
               "--format", "json", *extra]
        env = {**self.env, "PYTHONPATH": str(REPO / "python")}
        if background:
            return subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        return subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True,
                              timeout=timeout)
