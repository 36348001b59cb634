"""Paired timing: the one harness for every comparison of attnlab with a reference.

On a shared machine absolute timings move by 2x between runs, so a number measured now cannot
be compared with a number measured at another time. A *paired* measurement can: both sides
run in the same process, one call of each per round, their order alternating from round to
round (candidate first, then reference first), after warm-up calls that are not counted. Each
round gives one ratio ``reference time / candidate time`` (> 1: the candidate is faster), and
load that hits a round hits both of its calls. The result is the median of those ratios with
its spread (quartiles, min, max), for two clocks:

* ``wall``: elapsed time (``time.perf_counter``), what a user waits for;
* ``cpu``: CPU time of this process (``time.process_time``), which counts only the time the
  process actually ran and so is much less disturbed by other processes on a loaded machine
  (with one torch thread it is the work done; with more threads it also counts their waiting).

The machine's load (``os.getloadavg``) before and after, the number of CPUs, torch's threads
and the absolute medians are recorded with every comparison: an absolute time means nothing
without them.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import statistics
import time
from typing import Callable

import torch


def machine() -> dict:
    """Where and when: CPUs, torch threads, load averages, torch/Python versions, bf16 support, GPU."""
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        flags = ""
    return {
        "date_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "loadavg_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpu_avx512_bf16": "avx512_bf16" in flags,
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }


def _spread(values: list[float]) -> dict:
    values = sorted(values)
    q = statistics.quantiles(values, n=4) if len(values) >= 2 else [values[0]] * 3
    return {"median": round(statistics.median(values), 4), "q1": round(q[0], 4), "q3": round(q[2], 4),
            "min": round(values[0], 4), "max": round(values[-1], 4), "n": len(values)}


def compare(candidate: Callable[[], object], reference: Callable[[], object], *, rounds: int,
            warmup: int = 2) -> dict:
    """Time ``candidate()`` against ``reference()`` in alternating order; return the paired ratios.

    Args:
        candidate, reference: zero-argument callables doing one unit of work each (a training
            step, a whole generation); whatever they return is ignored.
        rounds: counted rounds (one call of each per round).
        warmup: uncounted rounds first (allocator, caches, lazy initialisation).
    Returns:
        ``{"ratio_wall": spread, "ratio_cpu": spread, "candidate_ms": {...}, "reference_ms":
        {...}, "load_before", "load_after", "rounds", "warmup"}`` where a ratio is
        ``reference / candidate`` per round (> 1 = candidate faster) and a spread is
        ``{median, q1, q3, min, max, n}``.
    Raises:
        ValueError: ``rounds < 1`` or ``warmup < 0``.
    """
    if rounds < 1 or warmup < 0:
        raise ValueError(f"need rounds >= 1 and warmup >= 0, got rounds={rounds}, warmup={warmup}.")
    for _ in range(warmup):
        candidate()
        reference()
    load_before = [round(x, 2) for x in os.getloadavg()]
    times = {"candidate": {"wall": [], "cpu": []}, "reference": {"wall": [], "cpu": []}}
    sides = (("candidate", candidate), ("reference", reference))
    for r in range(rounds):
        for name, fn in (sides if r % 2 == 0 else sides[::-1]):  # alternate who goes first
            c0, w0 = time.process_time(), time.perf_counter()
            fn()
            w1, c1 = time.perf_counter(), time.process_time()
            times[name]["wall"].append(w1 - w0)
            times[name]["cpu"].append(c1 - c0)
    out = {}
    for clock in ("wall", "cpu"):
        ratios = [ref / max(cand, 1e-9) for ref, cand in zip(times["reference"][clock], times["candidate"][clock], strict=True)]
        out[f"ratio_{clock}"] = _spread(ratios)
    for name in ("candidate", "reference"):
        out[f"{name}_ms"] = {clock: round(1000 * statistics.median(times[name][clock]), 3) for clock in ("wall", "cpu")}
    out.update(load_before=load_before, load_after=[round(x, 2) for x in os.getloadavg()], rounds=rounds,
               warmup=warmup)
    return out


def spread_text(s: dict, bold: bool = False) -> str:
    """``median [q1-q3] (min-max)`` of a spread; with fewer than 4 rounds the rounds themselves
    (``median (rounds: a, b)``): quartiles of two or three samples would be extrapolations."""
    median = f"**{s['median']:.3f}**" if bold else f"{s['median']:.3f}"
    if s["n"] < 4:
        values = [s["min"], s["median"], s["max"]] if s["n"] == 3 else [s["min"], s["max"]][: s["n"]]
        return f"{median} (rounds: {', '.join(f'{v:.2f}' for v in values)})"
    return f"{median} [{s['q1']:.3f}-{s['q3']:.3f}] ({s['min']:.2f}-{s['max']:.2f})"


def describe(name: str, result: dict) -> str:
    """One line: the median paired ratios with their spread, the absolute medians and the load."""
    w, c = result["ratio_wall"], result["ratio_cpu"]
    return (f"{name}: wall {spread_text(w)}x, cpu {spread_text(c)}x over {w['n']} rounds; medians "
            f"{result['candidate_ms']['wall']:.1f} vs "
            f"{result['reference_ms']['wall']:.1f} ms wall; load {result['load_before'][0]}->{result['load_after'][0]}")
