"""Defaults for the machine a class really has: numeric precision and torch's thread count.

One home for both decisions; :func:`attnlab.training.train` reads them through
:func:`resolve_precision` and :func:`machine_policy`, and a lesson can print
:attr:`MachinePolicy.summary` to say what it got and why.

Precision (``TrainConfig(precision="auto")``):

* a CUDA GPU: bf16 autocast where the GPU supports it, else fp16 with a gradient scaler;
* a CPU that computes bf16 natively (x86 flags ``avx512_bf16`` or ``amx_bf16``): bf16 autocast.
  The loss holds: nanoGPT's shakespeare_char CPU recipe, 2,000 steps in nanoGPT's order,
  reached val 1.8857 at seed 1337 in bf16 as in float32, and 1.8741 / 1.8961 / 1.8871 at seeds
  1 / 2 / 3 against 1.8735 / 1.8962 / 1.8881 (``benchmarks/nanogpt_order.py``, RESULTS.md);
* any other CPU: float32 (bf16 would be emulated there, slower than float32).

Threads: intra-op threads = the CPUs this process may really use, the smallest of

* the CPUs it may run on (``os.sched_getaffinity``; a container's cpuset);
* the cgroup CPU quota (cgroup v2 ``cpu.max`` of the process's cgroup and its parents, or v1
  ``cpu.cfs_quota_us / cpu.cfs_period_us``): what a Kubernetes CPU limit or a systemd
  ``CPUQuota=`` (JupyterHub's per-user limit with SystemdSpawner) sets;
* the ``CPU_LIMIT`` variable that JupyterHub spawners set from ``c.Spawner.cpu_limit``;
* the CPUs of that set left idle by other work, measured over a short interval from
  ``/proc/stat`` (on a shared machine a thread whose core is busy makes every other thread
  wait at each barrier: on a 2-core machine under load 4-7 one thread stepped twice as fast as
  two).

At least one thread; rounded down, except that a fraction of a CPU counts as one.

The load of a shared machine changes while a run lasts (a classmate starts a cell, a test suite
ends), so :func:`attnlab.training.train` re-decides the thread count as it goes
(:class:`ThreadGovernor`): every few dozen steps it reads how much of the allowed CPUs' time since
the last look went to other work (``/proc/stat``'s busy time minus this process's own CPU time),
and runs on the CPUs that other work left free. One look costs a file read, no waiting.

Sources: the Linux kernel's cgroup v2 documentation (``cpu.max``: "$MAX $PERIOD") and cgroup v1
CFS bandwidth control (``cpu.cfs_quota_us``, ``cpu.cfs_period_us``); ``proc(5)`` for
``/proc/stat`` and ``/proc/self/cgroup``; JupyterHub's ``Spawner.cpu_limit`` ("exposed to the
single-user server as the environment variable CPU_LIMIT"); torch's CPU autocast (bf16).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import torch

__all__ = ["MachinePolicy", "resolve_precision", "cpu_has_native_bf16", "cgroup_cpu_limit", "idle_cpus",
           "thread_count", "machine_policy", "apply_thread_policy", "ThreadGovernor"]

PRECISIONS = ("auto", "fp32", "bf16", "fp16")
NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16")


def _cpu_flags(cpuinfo: str | os.PathLike) -> set[str]:
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):  # x86 "flags", arm "Features"
            return set(line.split(":", 1)[1].split())
    return set()


def cpu_has_native_bf16(cpuinfo: str | os.PathLike = "/proc/cpuinfo") -> bool:
    """Whether the CPU has bf16 arithmetic instructions (``avx512_bf16`` or ``amx_bf16`` in
    ``cpuinfo``'s flags). False when the file cannot be read (e.g. macOS). Shapes do not apply."""
    return bool(_cpu_flags(cpuinfo) & set(NATIVE_BF16_FLAGS))


def resolve_precision(precision: str, device: str, *, cpuinfo: str | os.PathLike = "/proc/cpuinfo") -> str:
    """``"auto"`` -> the precision for ``device`` (see the module docstring); others unchanged.

    Args: ``precision`` (str), ``device`` (``"cpu"``, ``"cuda[:i]"``, ``"mps"``), ``cpuinfo`` (a
    ``/proc/cpuinfo``-format file; shapes do not apply).

    Returns one of ``"fp32"``, ``"bf16"``, ``"fp16"``.

    Raises:
        ValueError: ``precision`` not one of ``auto, fp32, bf16, fp16``.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}.")
    if precision != "auto":
        return precision
    if device.startswith("cuda"):
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    if device == "cpu" and cpu_has_native_bf16(cpuinfo):
        return "bf16"
    return "fp32"


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def cgroup_cpu_limit(root: str | os.PathLike = "/sys/fs/cgroup",
                     proc_self_cgroup: str | os.PathLike = "/proc/self/cgroup") -> float | None:
    """The CPU quota of this process's cgroup in CPUs (e.g. 2.0, 0.5), or None without one.

    cgroup v2: the smallest ``quota / period`` of ``cpu.max`` in the process's cgroup (from
    ``proc_self_cgroup``'s ``0::/path``) and each parent up to ``root``; ``max`` = no quota.
    cgroup v1: ``cpu/cpu.cfs_quota_us / cpu.cfs_period_us`` (-1 = none) under ``root``.
    """
    root = Path(root)
    rel = ""
    text = _read(Path(proc_self_cgroup)) or ""
    for line in text.splitlines():
        if line.startswith("0::"):
            rel = line[3:].strip().lstrip("/")
    limits = []
    here = root / rel if rel else root
    while True:
        raw = _read(here / "cpu.max")
        if raw:
            quota, _, period = raw.partition(" ")
            if quota != "max" and period:
                limits.append(int(quota) / int(period))
        if here == root or root not in here.parents:
            break
        here = here.parent
    for v1 in (root / "cpu", root / "cpu,cpuacct", root):
        v1_quota, v1_period = _read(v1 / "cpu.cfs_quota_us"), _read(v1 / "cpu.cfs_period_us")
        if v1_quota and v1_period and int(v1_quota) > 0:
            limits.append(int(v1_quota) / int(v1_period))
            break
    return min(limits) if limits else None


def _cpu_times(stat: str | os.PathLike) -> dict[int, tuple[int, int]]:
    """``cpu -> (idle + iowait, total)`` jiffies from ``/proc/stat``."""
    out = {}
    for line in (_read(Path(stat)) or "").splitlines():
        name, *fields = line.split()
        if name.startswith("cpu") and name[3:].isdigit():
            values = [int(f) for f in fields[:8]]
            out[int(name[3:])] = (values[3] + values[4], sum(values))
    return out


def idle_cpus(cpus: set[int], *, stat: str | os.PathLike = "/proc/stat", interval_s: float = 0.25,
              sleep: Callable[[float], None] = time.sleep) -> float | None:
    """How many of ``cpus`` sat idle over ``interval_s`` (sum of their idle fractions, in CPUs,
    from the idle + iowait jiffies of ``/proc/stat``), or None when ``stat`` cannot be read or
    shows none of them. Shapes do not apply."""
    before = _cpu_times(stat)
    sleep(interval_s)
    after = _cpu_times(stat)
    idle = 0.0
    seen = False
    for cpu in cpus:
        if cpu in before and cpu in after:
            d_idle, d_total = after[cpu][0] - before[cpu][0], after[cpu][1] - before[cpu][1]
            if d_total > 0:
                idle += d_idle / d_total
                seen = True
    return idle if seen else None


def thread_count(*, affinity: set[int] | None = None, cgroup_limit: float | None = None,
                 hub_limit: float | None = None, idle: float | None = None) -> int:
    """Threads for the limits given (None = no such limit): the smallest of ``len(affinity)``,
    ``cgroup_limit``, ``hub_limit`` and ``idle`` CPUs, rounded down, at least 1 (shapes do not apply:
    all in CPUs)."""
    n = float(len(affinity)) if affinity else float(os.cpu_count() or 1)
    for limit in (cgroup_limit, hub_limit, idle):
        if limit is not None:
            n = min(n, limit)
    return max(1, math.floor(n + 0.25))  # 1.8 idle CPUs -> 2: a core briefly busy with the measurement itself


@dataclass(frozen=True)
class MachinePolicy:
    """What :func:`machine_policy` decided, with the figures it used.

    Attributes:
        device: ``"cpu"``, ``"cuda"``, ...
        precision: ``"fp32"``, ``"bf16"`` or ``"fp16"``.
        threads: torch intra-op threads for this process.
        cpus: CPUs in the affinity set; cgroup_limit, hub_limit, idle: the limits found (None: none).
        native_bf16: the CPU's bf16 flags; precision_requested, threads_requested: what was asked.
    """

    device: str
    precision: str
    threads: int
    cpus: int
    cgroup_limit: float | None
    hub_limit: float | None
    idle: float | None
    native_bf16: bool
    precision_requested: str = "auto"
    threads_requested: int | None = None

    @property
    def summary(self) -> str:
        """One line: the precision and threads chosen, and why."""
        if self.precision_requested != "auto":
            why = "as configured"
        elif self.device.startswith("cuda"):
            why = "the GPU's mixed precision"
        elif self.precision == "bf16":
            why = "this CPU computes bf16 natively"
        else:
            why = "this CPU has no native bf16 (avx512_bf16/amx_bf16), where bf16 would be slower"
        limits = [f"{self.cpus} CPUs allowed"]
        for name, value in (("cgroup quota", self.cgroup_limit), ("hub limit", self.hub_limit),
                            ("idle", self.idle)):
            if value is not None:
                limits.append(f"{name} {value:.1f}")
        if self.threads_requested is not None:
            limits = ["as configured"]
        return f"{self.precision} ({why}); {self.threads} torch thread(s) ({', '.join(limits)})."


def machine_policy(device: str = "cpu", precision: str = "auto", threads: int | None = None, *,
                   cpuinfo: str | os.PathLike = "/proc/cpuinfo",
                   cgroup_root: str | os.PathLike = "/sys/fs/cgroup",
                   proc_self_cgroup: str | os.PathLike = "/proc/self/cgroup", stat: str | os.PathLike = "/proc/stat",
                   environ: Mapping[str, str] | None = None, affinity: set[int] | None = None,
                   interval_s: float = 0.25) -> MachinePolicy:
    """Precision and thread count for ``device`` on this machine (the module docstring says how).

    Every source is a parameter (files, environment, affinity set), so the policy can be tested on
    any machine's figures. On a GPU the thread count is still computed (the host side uses it).
    ``precision`` other than ``"auto"`` and ``threads`` other than None are kept as given (and
    the idle CPUs are then not measured).

    Raises:
        ValueError: ``precision`` not one of ``auto, fp32, bf16, fp16``; ``threads`` not a positive int.
    """
    environ = os.environ if environ is None else environ
    if affinity is None:
        affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))
    cg = cgroup_cpu_limit(cgroup_root, proc_self_cgroup)
    hub = None
    raw = environ.get("CPU_LIMIT", "").strip()
    if raw:
        try:
            hub = float(raw) if float(raw) > 0 else None
        except ValueError:
            hub = None  # not a number: a spawner that sets nothing usable
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive int or None (the machine's policy), got {threads!r}.")
    idle = idle_cpus(affinity, stat=stat, interval_s=interval_s) if interval_s > 0 and threads is None else None
    chosen = threads or thread_count(affinity=affinity, cgroup_limit=cg, hub_limit=hub, idle=idle)
    return MachinePolicy(device, resolve_precision(precision, device, cpuinfo=cpuinfo), chosen, len(affinity),
                         cg, hub, idle, cpu_has_native_bf16(cpuinfo), precision, threads)


def apply_thread_policy(policy: MachinePolicy) -> int:
    """``torch.set_num_threads(policy.threads)``; returns the previous count (an int, to restore it).

    The thread count is process-wide (torch intra-op threads); shapes do not apply."""
    previous = torch.get_num_threads()
    torch.set_num_threads(policy.threads)
    return previous


class ThreadGovernor:
    """Re-decides the torch thread count during a run from the CPU time other work took.

    At each :meth:`look` it compares ``/proc/stat`` with the last look: for the allowed CPUs, the
    busy fraction of each (everything but idle and iowait) summed gives the CPUs in use; minus this
    process's own CPU time over the same wall time (``cpu_clock``, all its threads) gives the CPUs
    **other work** used. The CPUs left free = allowed CPUs - other work; the new thread count is
    :func:`thread_count` of that with the policy's cgroup and hub limits. Spinning threads of this
    process count as its own, so the measure holds whatever thread count ran.

    Args:
        policy: the starting decision (:func:`machine_policy`); its ``threads`` is the count now.
        affinity: the allowed CPUs (default: ``os.sched_getaffinity(0)``).
        stat: a ``/proc/stat``-format file; ``clock``, ``cpu_clock``: wall and process CPU time in
            seconds (parameters so the arithmetic can be tested on given figures).

    Attributes:
        threads: the current decision (int >= 1). ``free``: CPUs other work left free at the last
            look (None before the first), in CPUs.
    """

    def __init__(self, policy: MachinePolicy, *, affinity: set[int] | None = None,
                 stat: str | os.PathLike = "/proc/stat", clock: Callable[[], float] = time.monotonic,
                 cpu_clock: Callable[[], float] = time.process_time) -> None:
        if affinity is None:
            affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))
        self.policy, self.affinity, self.stat = policy, affinity, stat
        self.clock, self.cpu_clock = clock, cpu_clock
        self.threads = policy.threads
        self.free: float | None = None
        self._last = self._snapshot()

    def _snapshot(self) -> tuple[dict[int, tuple[int, int]], float, float]:
        return _cpu_times(self.stat), self.clock(), self.cpu_clock()

    def look(self) -> int:
        """Measure since the last look and return the thread count to run with now (shapes do not
        apply; in threads). Unchanged when ``/proc/stat`` cannot be read or no time has passed."""
        (before, wall0, own0), (after, wall1, own1) = self._last, self._snapshot()
        self._last = (after, wall1, own1)
        busy, seen = 0.0, False
        for cpu in self.affinity:
            if cpu in before and cpu in after:
                d_total = after[cpu][1] - before[cpu][1]
                if d_total > 0:
                    busy += 1.0 - (after[cpu][0] - before[cpu][0]) / d_total
                    seen = True
        if not seen or wall1 <= wall0:
            return self.threads
        others = max(0.0, busy - (own1 - own0) / (wall1 - wall0))  # CPUs other work kept busy
        self.free = max(0.0, len(self.affinity) - others)
        self.threads = thread_count(affinity=self.affinity, cgroup_limit=self.policy.cgroup_limit,
                                    hub_limit=self.policy.hub_limit, idle=self.free)
        return self.threads
