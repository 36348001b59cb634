"""Timing demonstrations in the lessons: paired ratios under the course's thread policy, and claims
checked against what the cell measured.

On a shared machine one timing means little: the same call takes 2x longer when a classmate starts a
cell.  A lesson that compares two computations therefore measures them *paired*
(:func:`paired_ratio`): one call of each per round, their order alternating, after warm-up calls that
are not counted; each round gives the ratio ``time of a / time of b``, and the result is the median of
those per-round ratios with its quartiles, so load that hits a round hits both of its calls.  It runs
under the course's thread policy (:func:`attnlab.fast.policy.machine_policy`, restored afterwards) and
says what it measured on (:attr:`PairedRatio.machine`).

A sentence of a lesson that states what a measurement shows is checked by the cell that measures it
(:func:`claim`): the cell prints whether the claim held here, with the figures, and publishes it as
data (MIME type ``CLAIM_MIME``), which the lesson tests read: every claim of an executed lesson
must hold (``tests/notebooks/test_lessons.py``).  Method: the same paired design as the project's
benchmark harness (``benchmarks/paired.py``); the thread count is fixed for the measurement with
``torch.set_num_threads``, as PyTorch's own ``torch.utils.benchmark.Timer`` (``num_threads``) does.
"""
from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass
from typing import Callable

import torch

from .policy import apply_thread_policy, machine_policy

__all__ = ["PairedRatio", "paired_ratio", "claim", "CLAIM_MIME"]

#: MIME type of a claim's output (``{"claim": str, "holds": bool, "figures": str}``).
CLAIM_MIME = "application/vnd.attnlab.claim+json"


@dataclass(frozen=True)
class PairedRatio:
    """A paired timing of ``a`` against ``b``.

    ``median``, ``q1``, ``q3``: median and quartiles of the per-round ratios ``a time / b time``
    (> 1: ``b`` is faster); ``a_ms``, ``b_ms``: median times in milliseconds; ``rounds``: rounds
    counted; ``machine``: CPUs, torch threads and load average it was measured with."""

    median: float
    q1: float
    q3: float
    a_ms: float
    b_ms: float
    rounds: int
    machine: str

    def text(self, a: str, b: str) -> str:
        """One line: ``a / b = median (quartiles q1-q3, n rounds)`` with both medians and the machine."""
        return (f"{a} / {b} = {self.median:.2f} (quartiles {self.q1:.2f}-{self.q3:.2f} over {self.rounds} paired "
                f"rounds; medians {self.a_ms:.3g} ms and {self.b_ms:.3g} ms) on {self.machine}")


def _machine(threads: int) -> str:
    try:
        load = f"load average {os.getloadavg()[0]:.1f}"
    except OSError:  # not on every platform
        load = "load average unknown"
    return f"{os.cpu_count() or 1} CPUs, {threads} torch thread(s), {load}"


def paired_ratio(a: Callable[[], object], b: Callable[[], object], rounds: int = 15, warmup: int = 2) -> PairedRatio:
    """Time ``a`` against ``b`` in ``rounds`` paired rounds (see the module docstring) under the
    course's thread policy, with autograd off.  ``rounds`` >= 3; seconds measured by
    ``time.perf_counter``.  Raises ValueError for fewer than 3 rounds."""
    if rounds < 3:
        raise ValueError(f"paired_ratio needs at least 3 rounds for quartiles, got {rounds}")
    previous = apply_thread_policy(machine_policy())
    try:
        with torch.no_grad():
            for _ in range(warmup):
                a(), b()
            ratios, ta, tb = [], [], []
            for r in range(rounds):
                times = {}
                for name, fn in ((("a", a), ("b", b)) if r % 2 == 0 else (("b", b), ("a", a))):
                    t0 = time.perf_counter()
                    fn()
                    times[name] = time.perf_counter() - t0
                ta.append(times["a"])
                tb.append(times["b"])
                ratios.append(times["a"] / max(times["b"], 1e-9))
        q1, median, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
        return PairedRatio(median, q1, q3, 1e3 * statistics.median(ta), 1e3 * statistics.median(tb), rounds,
                           _machine(torch.get_num_threads()))
    finally:
        torch.set_num_threads(previous)


def claim(holds: bool, text: str, figures: str) -> bool:
    """Print whether the lesson's claim ``text`` held in this run, with the ``figures`` it rests on,
    and publish it as data (``CLAIM_MIME``) for the lesson tests.  Never raises (a claim that did
    not hold on a learner's machine is reported, not an error); returns ``holds``."""
    mark = "✔ as the text says" if holds else "✘ NOT on this machine this time"
    line = f"{mark}: {text} ({figures})"
    try:
        from IPython import get_ipython
        from IPython.display import display
        if get_ipython() is not None:
            display({CLAIM_MIME: {"claim": text, "holds": bool(holds), "figures": figures}, "text/plain": line},
                    raw=True)
            return bool(holds)
    except ImportError:
        pass
    print(line)
    return bool(holds)
