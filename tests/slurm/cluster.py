"""A real single-host Slurm for the tests: ``munged`` + ``slurmctld`` + ``slurmd`` from Debian's
``slurm-wlm`` and ``munge``, with a generated configuration under a temporary folder.

Everything it starts has a name and ports unique to the run (cluster ``attnlab<hex>``, node
``attnlab<hex>``, free loopback ports, its own munge socket and key); :meth:`Cluster.stop` ends
each daemon by its own PID and removes the folder, and runs whatever happened before it.
``ProctrackType=proctrack/linuxproc`` and ``TaskPlugin=task/none`` need no cgroup delegation;
there is no accounting database.  Needs root (slurmd starts jobs as their submitting user).
"""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

BINARIES = ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol")


def why_not() -> str | None:
    """Why a single-host Slurm cannot start here (one sentence), or None."""
    if os.geteuid() != 0:
        return "starting slurmd and munged needs root"
    missing = [b for b in BINARIES if not shutil.which(b)]
    if missing:
        return (f"{', '.join(missing)} not installed: install Debian's slurm-wlm and munge "
                "(scripts/ensure_slurm.sh does when run as root)")
    return None


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class Cluster:
    """One controller and one compute node on this host; ``env`` has ``SLURM_CONF`` for the
    client commands.  Use as a context manager."""

    def __init__(self, cpus: int = 2, memory_mb: int = 8000):
        self.name = "attnlab" + secrets.token_hex(4)
        self.dir = Path(tempfile.mkdtemp(prefix="attnlab-slurm-"))
        self.cpus, self.memory_mb = cpus, memory_mb
        self.procs: list[subprocess.Popen] = []
        self.conf = self.dir / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}

    # -- set up -------------------------------------------------------------------------------
    def _write_config(self):
        d = self.dir
        for sub in ("munge", "ctld", "spool", "log"):
            (d / sub).mkdir(mode=0o700)
        ctld_port, d_port = _free_ports(2)
        host = socket.gethostname()
        self.conf.write_text("\n".join([
            f"ClusterName={self.name}",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={ctld_port}",
            f"SlurmdPort={d_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={d / 'munge' / 'munge.socket'}",
            f"StateSaveLocation={d / 'ctld'}",
            f"SlurmdSpoolDir={d / 'spool'}",
            f"SlurmctldPidFile={d / 'slurmctld.pid'}",
            f"SlurmdPidFile={d / 'slurmd.pid'}",
            f"SlurmctldLogFile={d / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={d / 'log' / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU_Memory",
            "MpiDefault=none",
            "ReturnToService=2",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "MinJobAge=600",
            "KillWait=5",
            f"NodeName={self.name} NodeHostname={host} NodeAddr=127.0.0.1 CPUs={self.cpus} "
            f"RealMemory={self.memory_mb} State=UNKNOWN",
            f"PartitionName={self.name} Nodes={self.name} Default=YES MaxTime=INFINITE State=UP",
            "",
        ]))

    def _spawn(self, argv: list[str], log: str):
        out = open(self.dir / "log" / log, "ab")  # noqa: SIM115 - closed with the process
        self.procs.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=self.env,
                                           start_new_session=True))
        out.close()

    def start(self, timeout: float = 60) -> "Cluster":
        """Start munged, slurmctld and slurmd; wait until the node is idle.  ``RuntimeError`` with
        the daemons' log tails when it does not come up within ``timeout`` seconds."""
        self._write_config()
        m = self.dir / "munge"
        key = m / "munge.key"
        subprocess.run(["mungekey", "--create", f"--keyfile={key}"], check=True, capture_output=True)
        key.chmod(0o400)
        self._spawn(["munged", "--foreground", "--force", f"--key-file={key}", f"--socket={m / 'munge.socket'}",
                     f"--pid-file={m / 'munged.pid'}", f"--log-file={m / 'munged.log'}",
                     f"--seed-file={m / 'munged.seed'}"], "munged.out")
        self._wait(lambda: (m / "munge.socket").exists(), 10, "munged did not create its socket")
        self._spawn(["slurmctld", "-D", "-i", "-f", str(self.conf)], "slurmctld.out")
        self._spawn(["slurmd", "-D", "-N", self.name, "-f", str(self.conf)], "slurmd.out")
        self._wait(self._idle, timeout, "the node did not become idle")
        return self

    def _idle(self) -> bool:
        res = self.run(["sinfo", "-h", "-N", "-o", "%t"], check=False)
        return res.returncode == 0 and res.stdout.strip() == "idle"

    def _wait(self, ok, timeout, what):
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{p.args[0]} exited with {p.returncode}:\n{self.logs()}")
            if ok():
                return
            time.sleep(0.5)
        raise RuntimeError(f"{what} within {timeout:.0f} s:\n{self.logs()}")

    def logs(self, tail: int = 3000) -> str:
        """The last ``tail`` characters of every daemon log."""
        out = []
        for p in sorted(self.dir.glob("**/*.log")) + sorted((self.dir / "log").glob("*.out")):
            out.append(f"--- {p.name}\n{p.read_text(errors='replace')[-tail:]}")
        return "\n".join(out)

    # -- use ----------------------------------------------------------------------------------
    def run(self, argv: list[str], check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
        """A Slurm client command against this cluster."""
        res = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and res.returncode:
            raise RuntimeError(f"{' '.join(argv)} failed ({res.returncode}): {res.stderr.strip()}")
        return res

    def states(self, job: str) -> dict[str, str]:
        """``{array task id: state}`` of ``job`` while the controller remembers it (MinJobAge)."""
        res = self.run(["scontrol", "-o", "show", "job", job], check=False)
        out = {}
        for line in res.stdout.splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            if "ArrayTaskId" in fields:
                out[fields["ArrayTaskId"]] = fields.get("JobState", "")
        return out

    # -- tear down ----------------------------------------------------------------------------
    def stop(self):
        """Cancel every job, stop slurmd, slurmctld and munged (by their own PIDs: TERM, then KILL
        after 10 s), and remove the folder."""
        try:
            if self.procs:  # jobs first, so that slurmd's job steps end with them (up to 30 s)
                self.run(["scancel", f"--partition={self.name}"], check=False)
                t0 = time.monotonic()
                while time.monotonic() - t0 < 30 and self.run(["squeue", "-h", "-o", "%i"], check=False).stdout.strip():
                    time.sleep(0.5)
        except Exception:  # noqa: BLE001 - stopping goes on whatever the controller says
            pass
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in reversed(self.procs):
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(5)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()
