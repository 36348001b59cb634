"""Skills, variants and feedback: the objects every practice item is made of.

A :class:`Skill` turns a seed into a :class:`Variant` (prompt + numbers + expected
answer, the answer computed with ``attnlab.nn``) and checks an answer against it,
returning :class:`Feedback` that names a recognised misconception or points at the
first wrong entry without revealing the expected value.
"""
from __future__ import annotations

import copy
import difflib
import functools
import random
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

import numpy as np

from ..course import lesson_id  # noqa: F401 - one home: attnlab.course (re-exported as attnlab.practice.lesson_id)
from .answers import (LETTER_KINDS, AnswerFormatError, Difference, NoSuchOption, compare, format_answer, parse, plain,
                      tolerance)
from .misconceptions import get_misconception
from .working import EXACT, Reach, reach


class Either(tuple):
    """The answers one named mistake can give, any of them (e.g. forgetting one bias of a feed-forward network
    loses d_ff or d_model parameters, whichever bias it is): a skill's mistake function returns
    ``Either([answer, other_answer])`` where one slip has several results."""

    __slots__ = ()


def _alternatives(value: Any) -> list:
    """The answers a mistake function's result stands for (one, or every one of an :class:`Either`)."""
    return list(value) if isinstance(value, Either) else [value]


@dataclass(frozen=True)
class Feedback:
    """Result of checking one answer.

    ``correct``; ``message`` (specific, never reveals the expected answer when wrong);
    ``misconception`` (name of the recognised mistake, or None; the first of
    ``misconceptions`` when several mistakes give this same answer); ``where`` (index of
    the first wrong entry when no mistake was recognised, else None); ``readable`` (False
    when the answer could not be read at all, or is a right answer written with fewer decimals than
    asked: then nothing should be recorded and the message says what to fix).
    """

    correct: bool
    message: str
    misconception: str | None = None
    where: tuple[int, ...] | None = None
    misconceptions: tuple[str, ...] = ()
    readable: bool = True

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Variant:
    """One concrete problem. ``prompt`` is markdown; ``data`` holds the numbers/config
    shown; ``answer`` is the expected answer (plain Python); ``tol`` is what is accepted:
    a :class:`~attnlab.practice.working.Reach` (the values rounding the working reaches, per
    entry) for a skill with working and decimals; None: exact, or half a unit of ``decimals``."""

    skill: str
    seed: int
    prompt: str
    data: Mapping[str, Any]
    answer: Any
    kind: str
    decimals: int | None = None
    tables: tuple[str, ...] = ()
    tol: Any = None

    def check(self, answer: Any, tier: int = 1) -> Feedback:
        """Shortcut for ``get_skill(self.skill).check(self, answer, tier)``."""
        return lookup(self.skill).check(self, answer, tier)

    @property
    def problem_kind(self) -> str:
        """The kind of problem this is within its skill (e.g. ``"S > L"``), or ``""``."""
        return lookup(self.skill).kind_of(self)


@dataclass(frozen=True)
class Skill:
    """A practisable skill tied to a lesson.

    ``build(rng) -> (prompt, data)`` makes the problem. The answer is the plain formula
    ``working(data, m)`` (see :mod:`attnlab.practice.working`: exact, and with every written-down
    value possibly rounded, which sets the tolerance) or, for exact answers, ``solve(data)``.
    ``reference(data)`` recomputes it with ``attnlab.nn`` (tests check they agree).
    ``mistakes[name](data)`` is the answer the named misconception produces (None: does not
    apply; an :class:`Either` of answers: any of them); ``hints`` = (nudge, method). ``kinds`` names the kinds of problem the skill contains
    and ``kind_of_data(data)`` says which one a problem is (mastery needs every kind).
    ``also_right(data)`` lists other answers that are just as right (e.g. masking before scaling: the
    same scores, since −∞/√d_k = −∞); ``orders`` are other workings that compute the same answer in
    another order (scaling Q before multiplying by Kᵀ): what rounding them reaches is accepted too.
    """

    name: str
    lesson: str
    title: str
    kind: str
    build: Callable[[random.Random], tuple[str, dict]]
    solve: Callable[[Mapping[str, Any]], Any] | None
    hints: tuple[str, str]
    mistakes: Mapping[str, Callable[[Mapping[str, Any]], Any]] = field(default_factory=dict)
    decimals: int | None = None
    tables: tuple[str, ...] = ()
    working: Callable[[Mapping[str, Any], Any], Any] | None = None
    reference: Callable[[Mapping[str, Any]], Any] | None = None
    kinds: tuple[str, ...] = ()
    kind_of_data: Callable[[Mapping[str, Any]], str] | None = None
    also_right: Callable[[Mapping[str, Any]], list] | None = None
    orders: tuple[Callable[[Mapping[str, Any], Any], Any], ...] = ()

    def __post_init__(self) -> None:
        # Mistake functions always hand back plain Python values (lists, floats, bools, tuples),
        # whatever they compute with, so callers can print, compare or JSON-dump them.
        wrapped = {name: _plain_result(fn) for name, fn in self.mistakes.items()}
        object.__setattr__(self, "mistakes", wrapped)
        if self.solve is None:
            if self.working is None:
                raise ValueError(f"skill {self.name!r} needs solve or working")
            working = self.working
            object.__setattr__(self, "solve", lambda d: working(d, EXACT))
        if bool(self.kinds) != (self.kind_of_data is not None):
            raise ValueError(f"skill {self.name!r}: give both kinds and kind_of_data, or neither")

    def solution(self, data: Mapping[str, Any]) -> Any:
        """The right answer for ``data`` (``solve``, or ``working`` without rounding when no ``solve`` was given)."""
        assert self.solve is not None  # __post_init__ fills in a missing solve from working
        return self.solve(data)

    def variant(self, seed: int) -> Variant:
        """The problem for ``seed`` (same seed -> same problem). Computed once and cached;
        each call returns its own copy of ``data``/``answer`` (plain, JSON-serialisable values)."""
        v = _variant(self.name, int(seed))
        return replace(v, data=copy.deepcopy(v.data), answer=copy.deepcopy(v.answer))

    def kind_of(self, variant: Variant | _Probe) -> str:
        """The kind of problem ``variant`` is (``""`` for a skill with one kind)."""
        return self.kind_of_data(variant.data) if self.kind_of_data is not None else ""

    def wrong_answers(self, variant: Variant) -> dict[str, Any]:
        """The answer each applicable misconception produces for ``variant`` (those that
        coincide with the right answer for these numbers are left out; of an :class:`Either`, the first
        answer that does not)."""
        return {name: values[0] for name, values in self._wrong_alternatives(variant).items()}

    def _wrong_alternatives(self, variant: Variant) -> dict[str, list]:
        """Every answer each applicable misconception can produce for ``variant``, apart from the right ones."""
        expected = parse(variant.answer, self.kind)
        others = [parse(a, self.kind) for a in (self.also_right(variant.data) if self.also_right else [])]
        out: dict[str, list] = {}
        for name, wrong in self.mistakes.items():
            try:
                result = wrong(variant.data)
            except Exception:  # noqa: BLE001 - a mistake that cannot be computed here simply does not apply
                continue
            for value in _alternatives(result):
                if value is None:  # this mistake does not apply to these numbers
                    continue
                try:
                    parsed = parse(value, self.kind)
                    if any(compare(e, parsed, self.kind, self.decimals, variant.tol) is None
                           for e in [expected] + others):
                        continue
                except AnswerFormatError:
                    pass
                out.setdefault(name, []).append(value)
        return out

    def read(self, variant: Variant, answer: Any) -> Any:
        """``answer`` read for ``variant`` (:func:`~attnlab.practice.answers.parse` of the skill's kind, with the
        options shown for an option item, and the expected value, which decides how a decimal comma is read).

        Raises:
            AnswerFormatError: it cannot be read (NoSuchOption: it names an option that is not shown)."""
        options = variant.data.get("options") if self.kind in LETTER_KINDS else None
        texts = [str(o[0]) for o in options] if options else None
        expected = variant.answer if self.kind in ("number", "int") else None
        return parse(answer, self.kind, options=texts, expected=expected)

    def diagnose(self, variant: Variant, answer: Any) -> tuple[str, ...]:
        """Every named mistake whose answer (with rounded working) ``answer`` matches, in catalogue order."""
        given = _one_row(parse(answer, self.kind), parse(variant.answer, self.kind), self.kind)
        names = []
        for name, values in self._wrong_alternatives(variant).items():
            for wrong in values:
                try:
                    value = parse(wrong, self.kind)
                    tol = variant.tol.around(value) if isinstance(variant.tol, Reach) else variant.tol
                    if compare(value, given, self.kind, self.decimals, tol) is None:
                        names.append(name)
                        break
                except AnswerFormatError:
                    continue
        return tuple(names)

    def check(self, variant: Variant, answer: Any, tier: int = 1) -> Feedback:
        """Check ``answer`` (any accepted form, see attnlab.practice.answers) for ``variant``.

        ``tier`` 1 says what is wrong; tier 2 (after a second miss or a hint) adds why and the method.
        An unreadable answer gives ``Feedback(readable=False)`` saying what could not be read.
        """
        if variant.skill != self.name:
            raise ValueError(f"variant belongs to skill {variant.skill!r}, not {self.name!r}")
        try:
            given = self.read(variant, answer)
        except NoSuchOption as err:
            return Feedback(False, str(err), readable=False)
        except AnswerFormatError as err:
            return Feedback(False, f"I could not read that answer: {err}", readable=False)
        expected = parse(variant.answer, self.kind)
        given = _one_row(given, expected, self.kind)
        if (self.kind in ("matrix", "mask") and np.ndim(given) == 1 and np.ndim(expected) == 2
                and np.size(given) == np.size(expected)):
            rows, cols = np.shape(expected)
            return Feedback(False, f"Your answer has the {np.size(given)} entries in one line; this result is a "
                                   f"{rows} × {cols} {'mask' if self.kind == 'mask' else 'matrix'}: write it row by "
                                   "row, e.g. [[a, b], [c, d]] or 'a b; c d'. Nothing was recorded.", readable=False)
        diff = compare(expected, given, self.kind, self.decimals, variant.tol)
        if diff is None:
            return Feedback(True, "Correct.")
        for other in (self.also_right(variant.data) if self.also_right else []):
            if compare(parse(other, self.kind), given, self.kind, self.decimals, variant.tol) is None:
                return Feedback(True, "Correct (one of the equally right answers).")
        names = self.diagnose(variant, given)
        if (not names and isinstance(variant.tol, Reach) and diff.reason == "value" and not _typed_precisely(
                answer, self.decimals) and np.shape(given) == np.shape(variant.tol.exact)
                and variant.tol.coarse(given)):
            return Feedback(False, f"Give {'every entry' if np.ndim(given) else 'your answer'} to "
                                   f"{self.decimals} decimals, as asked: with fewer decimals it cannot be told "
                                   "apart from nearby wrong answers. Nothing was recorded; check again with "
                                   f"{self.decimals} decimals.", readable=False)
        method = f" Method: {self.hints[1]}" if tier >= 2 else ""
        if names:
            found = [get_misconception(n) for n in names]
            if len(found) == 1:
                text = f"Not quite: it looks like {found[0].title}."
            else:
                text = ("Not quite: this is what you get if " + " or if ".join(m.title for m in found)
                        + f" ({'both' if len(found) == 2 else 'each'} give{'' if len(found) == 2 else 's'} this answer "
                        "here). Which one did you do?")
            if tier >= 2:
                text += " " + " ".join(m.why for m in found)
            return Feedback(False, text + method, misconception=names[0], misconceptions=names)
        return Feedback(False, _describe(diff, self) + method, where=diff.where)

    def worked(self, variant: Variant) -> str:
        """The worked answer: the method and the expected answer (shown only when asked for)."""
        return f"Method: {self.hints[1]} Answer: {format_answer(variant.answer, self.kind, self.decimals)}"


def _one_row(given: Any, expected: Any, kind: str) -> Any:
    """A one-row matrix or mask typed as a flat list (``1 1 1`` for ``[[1, 1, 1]]``) read as that one row."""
    if (kind in ("matrix", "mask") and np.ndim(given) == 1 and np.ndim(expected) == 2
            and np.shape(expected)[0] == 1 and np.shape(expected)[1] == np.shape(given)[0]):
        return np.asarray(given).reshape(1, -1)
    return given


def _typed_precisely(answer: Any, decimals: int | None) -> bool:
    """True when ``answer`` is text whose every number is written with at least ``decimals`` decimals
    ("1.000" for 3 decimals: the trailing zeros say it is meant that precisely)."""
    if not isinstance(answer, str) or decimals is None:
        return False
    numbers = re.findall(r"\d+(?:\.(\d*))?", answer)
    return bool(numbers) and all(len(frac) >= decimals for frac in numbers)


def _plain_result(fn: Callable[[Mapping[str, Any]], Any]) -> Callable[[Mapping[str, Any]], Any]:
    @functools.wraps(fn)
    def call(data: Mapping[str, Any]) -> Any:
        result = fn(data)
        return Either(plain(v) for v in result) if isinstance(result, Either) else plain(result)

    return call


def _shapes(diff: Difference) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(given_shape, expected_shape)`` of a "shape" or "length" difference (compare() sets both for those)."""
    assert diff.given_shape is not None and diff.expected_shape is not None, f"{diff.reason} difference without shapes"
    return diff.given_shape, diff.expected_shape


def _describe(diff: Difference, skill: Skill) -> str:
    """Say what is wrong without giving the expected value away (or confirming the rest of the answer)."""
    precision = f" (to {skill.decimals} decimals)" if skill.decimals is not None else ""
    if diff.reason == "shape":
        return _shape_message(*_shapes(diff), skill.kind)
    if diff.reason == "length" and skill.kind == "shape":
        got, want = _shapes(diff)
        return (f"Your shape has {got[0]} axes but this tensor has {want[0]}. "
                "Give one entry per axis.")
    if skill.kind in ("int_set", "choices"):
        return "That is not the right set. Recheck each item against the rule (a hint shows the method)."
    if skill.kind in ("choice", "order"):
        return "That is not it. Think about what each option would imply (a hint shows the method)."
    if diff.reason == "length":
        got, want = _shapes(diff)
        return (f"Your answer has {got[0]} entries but should have {want[0]}. "
                "Check that you have one entry per item asked for.")
    if not diff.where:
        return f"{diff.given} is not right{precision}. Recheck the computation (a hint shows the method)."
    if skill.kind in ("shape", "int_list", "vector"):
        label = f"entry {diff.where[0]} (counting from 0)"
    elif len(diff.where) == 2:
        label = f"row {diff.where[0]}, column {diff.where[1]} (counting from 0)"
    else:
        label = f"entry {list(diff.where)} (counting from 0)"
    given = diff.given
    if skill.kind == "mask":
        given = "True (may attend)" if bool(given) else "False (blocked)"
    return f"Look again at {label}: your value {given} is off{precision}."


def _shape_message(given: tuple[int, ...], expected: tuple[int, ...], kind: str) -> str:
    """Say which way the shape is off: axes swapped, or which axis has too many or too few entries."""
    head = f"Your answer has shape {given}, but this result has shape {expected}."
    if len(given) != len(expected):
        return f"{head} It needs {len(expected)} axes, not {len(given)}."
    if sorted(given) == sorted(expected):
        return f"{head} Check which axis is which: the axes look swapped."
    names = ("rows (one per query)", "columns (one per key)") if kind == "mask" else ("rows", "columns")
    parts = []
    for axis, (g, e) in enumerate(zip(given, expected, strict=True)):
        if g != e:
            label = names[axis] if len(expected) == 2 and axis < 2 else f"entries along axis {axis}"
            parts.append(f"{'fewer' if e < g else 'more'} {label}: {e}, not {g}")
    return f"{head} It needs {'; '.join(parts)}."


# ----------------------------------------------------------------------------- registry
_REGISTRY: dict[str, Skill] = {}


def lookup(name: str) -> Skill:
    """The registered skill called ``name`` (every skill is registered once :mod:`attnlab.practice` is imported,
    which imports :mod:`attnlab.practice.catalogue`).  Raises ``KeyError`` naming close matches if unknown."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    close = difflib.get_close_matches(name, _REGISTRY, n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else " Run `attnlab skills` to list them."
    raise KeyError(f"unknown skill {name!r}.{hint}")


def register(skill: Skill) -> Skill:
    """Add ``skill`` to the registry (names must be unique)."""
    if skill.name in _REGISTRY:
        raise ValueError(f"skill {skill.name!r} registered twice")
    _REGISTRY[skill.name] = skill
    return skill


_TRIES = 60  # rebuilds allowed to keep every named mistake's answer apart from the accepted ones
_KIND_BUILDS = 400  # builds allowed to draw a problem of the kind picked for the seed


def draw(skill: Skill, seed: int) -> tuple[str, dict, Any]:
    """``(prompt, data, tol)`` of the problem for ``seed``: pick its kind of problem first (every kind equally
    often, so no kind is rare among the problems served), then build (same random stream) until the problem
    is of that kind and every named mistake's answer falls outside the accepted answers (and the working can
    be bounded). Holds no :class:`Variant` (graded notebooks show the prompt this way, without the answer)."""
    rng = random.Random(seed)
    target = rng.choice(skill.kinds) if skill.kinds else None
    found, tries = None, 0
    for _ in range(_KIND_BUILDS):
        prompt, data = skill.build(rng)
        if target is not None and skill.kind_of(_Probe(data)) != target:
            continue
        try:
            tol = None
            if skill.working and skill.decimals:
                tol = reach(skill.working, data, skill.decimals)
                for other in skill.orders:
                    tol = tol.union(reach(other, data, skill.decimals))
        except (ZeroDivisionError, ValueError):  # rounding could reach a division by 0: pick other numbers
            continue
        found, tries = (prompt, data, tol), tries + 1
        if _mistakes_apart(skill, data, tol) or tries >= _TRIES:
            return found
    if found is None:
        raise RuntimeError(f"skill {skill.name!r} built no problem of kind {target!r} in {_KIND_BUILDS} tries")
    return found


@functools.lru_cache(maxsize=2048)
def _variant(name: str, seed: int) -> Variant:
    """The problem for ``seed`` (see :func:`draw`) with its answer."""
    skill = lookup(name)
    prompt, data, tol = draw(skill, seed)
    return Variant(name, seed, prompt, data, plain(skill.solution(data)), skill.kind, skill.decimals, skill.tables,
                   tol)


@dataclass(frozen=True)
class _Probe:
    """Stands in for a variant to ask a skill which kind of problem ``data`` is."""

    data: Mapping[str, Any]


def _mistakes_apart(skill: Skill, data: Mapping[str, Any], tol: Any) -> bool:
    """True if every named mistake that applies gives an answer the checker refuses and tells apart: not the
    right answer itself (a problem where the mistake gives the right answer cannot catch it), and, for a
    rounded answer, not within twice the spread of the accepted values."""
    expected = parse(plain(skill.solution(data)), skill.kind)
    others = [parse(a, skill.kind) for a in (skill.also_right(data) if skill.also_right else [])]
    if skill.decimals is None:
        wide = None
    elif isinstance(tol, Reach):
        wide = tol.around(tol.exact, widen=2.0)
    else:
        wide = _scaled(tol if tol is not None else tolerance(skill.decimals), 2.0)
    for wrong in skill.mistakes.values():
        try:
            values = _alternatives(wrong(data))
        except Exception:  # noqa: BLE001 - a mistake that cannot be computed does not apply
            continue
        for value in values:
            try:
                if value is None:
                    continue
                value = parse(value, skill.kind)
                if any(compare(e, value, skill.kind, None, 1e-6) is None for e in [expected] + others):
                    return False
                if wide is not None and compare(expected, value, skill.kind, None, wide) is None:
                    return False
            except Exception:  # noqa: BLE001 - a mistake that cannot be compared does not apply
                continue
    return True


def _scaled(tol: Any, factor: float) -> Any:
    return (np.asarray(tol, dtype=float) * factor).tolist() if isinstance(tol, list) else tol * factor
