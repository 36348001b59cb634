"""Hand working, exact or rounded: one formula per skill, evaluated several ways.

A by-hand skill writes its answer once as a plain formula over an :class:`Arith` ``m``::

    def working(d, m):
        s = m.r(q · k / m.r(m.sqrt(2)))        # m.r marks a value a learner writes down
        return m.softmax(...)

* ``EXACT`` evaluates it with floats: the expected answer (``m.r`` does nothing).
* :class:`Rounded` evaluates it as a learner with a pen does: some or all of the values marked
  ``m.r`` are rounded to the asked decimals before they are used further on.

:func:`reach` finds, per answer entry, every value that rounding the working can produce: each
written-down value is either kept exact or rounded to the asked decimals (a half either way), independently,
and every combination of these choices is evaluated (vectorised with numpy over the 2^n
combinations of the n written-down values an entry depends on); and the working with every value written
to one or two more decimals than asked (a careful learner's). The result is a :class:`Reach`:
the lowest and highest value reachable per entry. An answer is accepted when, rounded as the
learner typed it, it lies between these two rounded the same way, and no further (see
:meth:`Reach.accepts`): a slip just outside what any rounding of the working reaches is refused.
"""
from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = ["Arith", "EXACT", "Rounded", "Reach", "reach", "half_unit", "round_half_up", "decimals_of"]

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

    def softmax_shifted(self, row: Sequence, keep: Sequence[bool] | None = None) -> list:
        """The same softmax with the largest kept entry subtracted first, exp(x − max) (as numerically stable
        code does, and some learners by hand): the same exact weights, other written-down values."""
        keep = [True] * len(row) if keep is None else keep
        top = functools.reduce(np.maximum, [x for x, k in zip(row, keep, strict=True) if k])  # per lane, if arrays
        return self.softmax([x - top for x in row], keep)

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


def round_half_up(x, decimals: int, ties: float = 1.0):
    """``x`` rounded to ``decimals`` places, a half (6.685 to 2 places) up (``ties`` = 1) or down (``ties`` =
    -1): on paper a half is rounded either way, and a calculator's binary value may sit just below it.
    Works on numpy arrays."""
    scale = 10.0 ** decimals
    return np.floor(np.asarray(x) * scale + 0.5 + ties * 1e-9) / scale if ties > 0 else \
        np.ceil(np.asarray(x) * scale - 0.5 - 1e-9) / scale


def decimals_of(x: float, most: int = 12) -> int:
    """How many decimals ``x`` is written with (0.25 -> 2, 3.0 -> 0); ``most`` for a long fraction like 1/3."""
    for k in range(most + 1):
        scaled = x * 10.0 ** k
        if abs(scaled - round(scaled)) <= 1e-9 * max(1.0, abs(scaled)):
            return k
    return most


@dataclass(frozen=True)
class Reach:
    """The values rounding the working can produce, per entry: ``lo`` and ``hi`` (same nesting as the
    answer, or floats), ``decimals`` asked for. ``exact`` is the answer with every digit kept."""

    lo: Any
    hi: Any
    exact: Any
    decimals: int

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(lo, hi, exact)`` as float arrays (shape of the answer; () for a number)."""
        return (np.asarray(self.lo, dtype=float), np.asarray(self.hi, dtype=float),
                np.asarray(self.exact, dtype=float))

    def accepts(self, given: Any) -> np.ndarray:
        """Per entry (broadcast like the answer): True where ``given`` is a value the working reaches, written
        with the learner's own number of decimals (at least the asked ones): ``given`` typed with k decimals
        is accepted iff it lies between ``lo`` and ``hi`` rounded to k decimals."""
        lo, hi, _ = self.bounds()
        g = np.asarray(given, dtype=float)
        k = np.vectorize(decimals_of, otypes=[int])(g) if g.size else np.zeros(g.shape, int)
        k = np.maximum(k, self.decimals)
        return self._between(g, lo, hi, k)

    def coarse(self, given: Any) -> bool:
        """True when every entry of ``given`` has fewer decimals than asked (or as many) and is what the
        working gives rounded to those fewer decimals, with at least one entry short of the asked decimals:
        a right answer written too coarsely."""
        lo, hi, _ = self.bounds()
        g = np.asarray(given, dtype=float)
        if not g.size:
            return False
        k = np.vectorize(decimals_of, otypes=[int])(g)
        if np.any(k > self.decimals) or not np.any(k < self.decimals):
            return False
        return bool(np.all(self._between(g, lo, hi, k)))

    @staticmethod
    def _between(g, lo, hi, k) -> np.ndarray:
        scale = 10.0 ** k
        low = np.floor(lo * scale + 0.5 - 1e-9) / scale  # the lowest value rounds down at most to this
        high = np.floor(hi * scale + 0.5 + 1e-9) / scale
        eps = 1e-9 * np.maximum(1.0, np.abs(g))
        with np.errstate(invalid="ignore"):
            return (g >= low - eps) & (g <= high + eps)

    def union(self, other: "Reach") -> "Reach":
        """What either working reaches (the same exact answer computed in another order)."""
        lo = np.minimum(*(np.asarray(r.lo, dtype=float) for r in (self, other)))
        hi = np.maximum(*(np.asarray(r.hi, dtype=float) for r in (self, other)))
        return Reach(lo.tolist(), hi.tolist(), self.exact, self.decimals)

    def around(self, centre: Any, widen: float = 1.0) -> "Reach":
        """The same spread (scaled by ``widen``) around another answer ``centre`` (a named mistake's): what
        rounding that wrong working would reach, to the first order."""
        lo, hi, x = self.bounds()
        c = np.asarray(centre, dtype=float)
        if c.shape != x.shape:
            spread_lo, spread_hi = float(np.max(x - lo)), float(np.max(hi - x))
        else:
            spread_lo, spread_hi = x - lo, hi - x
        h = 0.5 * 10.0 ** (-self.decimals) * (widen - 1.0)
        return Reach((c - widen * spread_lo - h).tolist(), (c + widen * spread_hi + h).tolist(), c.tolist(),
                     self.decimals)


class _Vector(Arith):
    """The working for many rounding choices at once: written-down value number ``k`` in ``bits`` is rounded
    where bit ``bits[k]`` of the choice index is set, kept exact elsewhere (numpy arrays over the choices)."""

    def __init__(self, decimals: int, bits: Mapping[int, int], size: int, ties: float = 1.0) -> None:
        self.decimals, self.bits, self.count, self.ties = decimals, bits, 0, ties
        self.index = np.arange(size)
        self.met_half = False  # some written value sat on a half: the other way of rounding it matters

    def r(self, x):
        k, self.count = self.count, self.count + 1
        bit = self.bits.get(k)
        if bit is None:
            return x
        scaled = np.abs(np.asarray(x, dtype=float)) * 10.0 ** self.decimals
        self.met_half = self.met_half or bool(np.any(np.abs(scaled - np.floor(scaled) - 0.5) < 1e-7))
        return np.where((self.index >> bit) & 1, round_half_up(x, self.decimals, self.ties), x)

    exp, log, sqrt, sin, cos = (staticmethod(np.exp), staticmethod(np.log), staticmethod(np.sqrt),
                                staticmethod(np.sin), staticmethod(np.cos))


class _Probe(_Vector):
    """Exact working on n + 1 lanes, lane k + 1 with written-down value k nudged: which values each entry (and
    each written-down value) depends on. ``inputs[k]``: the lanes of value k before it is written down."""

    def __init__(self, decimals: int, n: int) -> None:
        super().__init__(decimals, {}, n + 1)
        self.inputs: list[np.ndarray] = []

    def r(self, x):
        k, self.count = self.count, self.count + 1
        x = np.broadcast_to(np.asarray(x, dtype=float), self.index.shape)
        self.inputs.append(x)
        return x + np.where(self.index == k + 1, half_unit(self.decimals), 0.0)


class _Careful(Arith):
    """Every written-down value rounded to ``decimals`` places, a half up (``ties`` = 1) or down (-1)."""

    def __init__(self, decimals: int, ties: float) -> None:
        self.decimals, self.ties = decimals, ties

    def r(self, x):
        return float(round_half_up(x, self.decimals, self.ties))


class _Count(Arith):
    def __init__(self) -> None:
        self.count = 0

    def r(self, x):
        self.count += 1
        return x


MAX_CHOICES = 22  # written-down values one entry may depend on (2^22 combinations, a few MB per array)


def _depends(lanes: np.ndarray) -> set[int]:
    return {int(k) - 1 for k in np.nonzero(np.abs(lanes[1:] - lanes[0]) > 1e-13 * max(1.0, abs(lanes[0])))[0] + 1}


def reach(working: Callable[[Mapping[str, Any], Arith], Any], data: Mapping[str, Any], decimals: int) -> Reach:
    """Every value rounding the working of ``working`` at ``decimals`` places can give, per entry (see the
    module docstring). Raises ValueError when an entry depends on more than ``MAX_CHOICES`` written values."""
    with np.errstate(all="ignore"):
        found = _reach(working, data, decimals)
    if not all(np.isfinite(np.asarray(found.lo, dtype=float)).flat) or not all(
            np.isfinite(np.asarray(found.hi, dtype=float)).flat):
        raise ValueError("rounding the working reaches a division by zero or an undefined value")
    return found


def _reach(working, data, decimals: int) -> Reach:
    counter = _Count()
    exact = working(data, counter)
    n = counter.count
    probe = _Probe(decimals, n)
    lanes = [np.broadcast_to(np.asarray(v, dtype=float), (n + 1,)) for v in _flat(working(data, probe))]
    # Which written-down values each one is computed from, through every earlier step (the closure: rounding
    # two values can matter together where nudging either alone cancels out, e.g. weights that sum to 1).
    # A written-down value that is exact at this precision whatever was rounded before it never changes.
    closure: list[set[int]] = []
    fixed: set[int] = set()
    for k, x in enumerate(probe.inputs):
        direct = _depends(x) - fixed
        closure.append(set().union(direct, *(closure[j] for j in direct)))
        if not closure[k] and abs(x[0] - round_half_up(x[0], decimals)) <= 1e-9:
            fixed.add(k)
    cones = []
    for v in lanes:
        direct = _depends(v) - fixed
        cones.append(tuple(sorted(set().union(direct, *(closure[j] for j in direct)) - fixed)))
    lo = [float(v[0]) for v in lanes]
    hi = list(lo)
    for cone in sorted(set(cones)):
        if not cone:
            continue
        if len(cone) > MAX_CHOICES:
            raise ValueError(f"an answer entry depends on {len(cone)} written-down values (at most {MAX_CHOICES})")
        bits = {k: j for j, k in enumerate(cone)}
        pen = _Vector(decimals, bits, 2 ** len(cone))
        up = _flat(working(data, pen))
        down = _flat(working(data, _Vector(decimals, bits, 2 ** len(cone), -1.0))) if pen.met_half else up
        for i, c in enumerate(cones):
            if c == cone:
                v = np.concatenate([np.ravel(up[i]), np.ravel(down[i])]).astype(float)
                lo[i], hi[i] = float(np.min(v)), float(np.max(v))
    # A careful learner keeps a digit or two more than asked while working (every written value to d + 1 or
    # d + 2 places, a half either way) and rounds the result to d places, a half up: what that reaches is right
    # too, and may lie outside the above where rounding to d + 1 places goes the other way from rounding to d
    # (5 / 2.915 = 1.7153 -> 1.72 where 5 / 2.92 and 5 / 2.9155 both give 1.71).
    for extra in (1, 2):
        for ties in (1.0, -1.0):
            for i, v in enumerate(_flat(working(data, _Careful(decimals + extra, ties)))):
                typed = float(round_half_up(v, decimals))
                lo[i], hi[i] = min(lo[i], typed), max(hi[i], typed)
    plain = [float(v) for v in _flat(exact)]
    if isinstance(exact, (list, tuple)):
        return Reach(_shaped(lo, exact), _shaped(hi, exact), _shaped(plain, exact), decimals)
    return Reach(lo[0], hi[0], plain[0], decimals)


def _flat(value: Any) -> list:
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _flat(item)]
    return [value]


def _shaped(flat: list[float], like: Any) -> Any:
    it = iter(flat)

    def build(x):
        return [build(v) for v in x] if isinstance(x, (list, tuple)) else next(it)

    return build(like)
