"""Hand working, exact or rounded: one formula per skill, evaluated several ways.

A by-hand skill writes its answer once as a plain formula over an :class:`Arith` ``m``::

    def working(d, m):
        s = m.r(q · k / m.r(m.sqrt(2)))        # m.r marks a value a learner writes down
        return m.softmax(...)

* ``EXACT`` evaluates it with floats: the expected answer (``m.r`` does nothing).
* :class:`Rounded` evaluates it as a learner with a pen does: some or all of the values marked
  ``m.r`` are rounded to the asked decimals before they are used further on.

:func:`tolerances` derives, per entry, how far rounded working can move the answer: it nudges each
written-down value by half a unit in turn, follows the nudge through the rest of the chain, and adds
up the effects (first-order error propagation, a linearised interval arithmetic that keeps the
correlations between steps, e.g. that a row of weights sums to 1), with a 10 % margin for the
second-order terms, plus half a unit for the final rounding. Every answer reachable by rounding the
working at the asked precision is accepted, and no more than that.
"""
from __future__ import annotations

import math
import random
from typing import Any, Callable, Mapping, Sequence

__all__ = ["Arith", "EXACT", "Rounded", "tolerances", "half_unit"]

MARGIN = 1.1  # covers the second-order terms of the propagated rounding errors


def half_unit(decimals: int) -> float:
    """Half a unit in the last asked place: the most a rounded value moves (+ 1e-9 for float noise)."""
    return 0.5 * 10.0 ** (-decimals) + 1e-9


class Arith:
    """Exact evaluation with floats (``r`` keeps every digit). :class:`Rounded` is a learner with a pen."""

    def r(self, x):
        """A value the learner writes down (may be rounded)."""
        return x

    def exp(self, x):
        return math.exp(x)

    def log(self, x):
        return math.log(x)

    def sqrt(self, x):
        return math.sqrt(x)

    def sin(self, x):
        return math.sin(x)

    def cos(self, x):
        return math.cos(x)

    def dot(self, a: Sequence, b: Sequence):
        """Σ a_i b_i, each product written down."""
        return self.r(sum((self.r(x * y) for x, y in zip(a, b)), 0.0))

    def softmax(self, row: Sequence, keep: Sequence[bool] | None = None) -> list:
        """exp of each kept entry, their sum, each exp / sum (all written down); blocked entries are 0."""
        keep = [True] * len(row) if keep is None else keep
        e = [self.r(self.exp(x)) if k else 0.0 for x, k in zip(row, keep)]
        total = self.r(sum(e, 0.0))
        return [self.r(v / total) if k else 0.0 for v, k in zip(e, keep)]

    def mix(self, weights: Sequence, rows: Sequence[Sequence]) -> list:
        """Σ_j w_j · rows[j] (a weighted average of row vectors), products and sums written down."""
        width = len(rows[0])
        return [self.r(sum((self.r(w * row[c]) for w, row in zip(weights, rows)), 0.0)) for c in range(width)]


class Rounded(Arith):
    """A learner's working: each written-down value is rounded to ``decimals`` places with probability
    ``p`` (``p = 1``: all of them), the choices drawn from ``rng``."""

    def __init__(self, decimals: int, p: float = 1.0, rng: random.Random | None = None) -> None:
        self.decimals, self.p, self.rng = decimals, p, rng or random.Random(0)

    def r(self, x):
        return round(x, self.decimals) if self.p >= 1.0 or self.rng.random() < self.p else x


EXACT = Arith()


class _Written(float):
    """A float that was written down (an ``r`` value): the final rounding of such an entry is already counted."""


class _Nudge(Arith):
    """Exact working, except that written-down value number ``at`` is moved by ``delta``; counts the values."""

    def __init__(self, decimals: int, at: int = -1) -> None:
        self.decimals, self.at, self.count = decimals, at, 0

    def r(self, x):
        i, self.count = self.count, self.count + 1
        if i == self.at and abs(x - round(x, self.decimals)) > 1e-9:  # a value already exact at this precision
            x = x + half_unit(self.decimals)  # is written as is (and rounding snaps small drifts back to it)
        return _Written(x)


def _flat(value: Any) -> list[float]:
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _flat(item)]
    return [value]


def _shaped(flat: list[float], like: Any) -> Any:
    it = iter(flat)

    def build(x):
        return [build(v) for v in x] if isinstance(x, (list, tuple)) else next(it)

    return build(like)


def tolerances(working: Callable[[Mapping[str, Any], Arith], Any], data: Mapping[str, Any], decimals: int) -> Any:
    """Per-entry tolerance (same nesting as the answer, or a float) of the answers reachable by rounding the
    working of ``working`` at ``decimals`` places (see the module docstring)."""
    h = half_unit(decimals)
    probe = _Nudge(decimals)
    exact = working(data, probe)
    base = [float(v) for v in _flat(exact)]
    spread = [0.0] * len(base)
    for i in range(probe.count):
        moved = [float(v) for v in _flat(working(data, _Nudge(decimals, i)))]
        spread = [s + abs(m - b) for s, m, b in zip(spread, moved, base)]
    tol = [max(h, MARGIN * s + (0.0 if isinstance(v, _Written) else h)) for s, v in zip(spread, _flat(exact))]
    return _shaped(tol, exact) if isinstance(exact, (list, tuple)) else tol[0]
