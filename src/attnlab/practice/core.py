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
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from .answers import AnswerFormatError, Difference, compare, parse, plain
from .misconceptions import get_misconception


def lesson_id(lesson: str | int) -> str:
    """Normalise ``3``, ``"3"``, ``"03"`` or ``"03_masks"`` to ``"03"``; ValueError otherwise."""
    text = str(lesson).strip()
    digits = text.split("_", 1)[0]
    if not digits.isdigit():
        raise ValueError(f"lesson must look like '03' or 3, got {lesson!r}")
    return f"{int(digits):02d}"


@dataclass(frozen=True)
class Feedback:
    """Result of checking one answer.

    ``correct``; ``message`` (specific, never reveals the expected answer when wrong);
    ``misconception`` (name of the recognised mistake, or None); ``where`` (index of
    the first wrong entry when no mistake was recognised, else None).
    """

    correct: bool
    message: str
    misconception: str | None = None
    where: tuple[int, ...] | None = None

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Variant:
    """One concrete problem. ``prompt`` is markdown; ``data`` holds the numbers/config
    shown; ``answer`` is the expected answer (plain Python, from attnlab.nn)."""

    skill: str
    seed: int
    prompt: str
    data: Mapping[str, Any]
    answer: Any
    kind: str
    decimals: int | None = None
    tables: tuple[str, ...] = ()

    def check(self, answer: Any) -> Feedback:
        """Shortcut for ``get_skill(self.skill).check(self, answer)``."""
        return get_skill(self.skill).check(self, answer)


@dataclass(frozen=True)
class Skill:
    """A practisable skill tied to a lesson.

    ``build(rng) -> (prompt, data)`` makes the problem; ``solve(data)`` computes the
    expected answer with attnlab.nn; ``mistakes[name](data)`` computes the answer a
    named misconception would produce; ``hints`` = (nudge, method).
    """

    name: str
    lesson: str
    title: str
    kind: str
    build: Callable[[random.Random], tuple[str, dict]]
    solve: Callable[[Mapping[str, Any]], Any]
    hints: tuple[str, str]
    mistakes: Mapping[str, Callable[[Mapping[str, Any]], Any]] = field(default_factory=dict)
    decimals: int | None = None
    tables: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Mistake functions always hand back plain Python values (lists, floats, bools, tuples),
        # whatever they compute with, so callers can print, compare or JSON-dump them.
        wrapped = {name: _plain_result(fn) for name, fn in self.mistakes.items()}
        object.__setattr__(self, "mistakes", wrapped)

    def variant(self, seed: int) -> Variant:
        """The problem for ``seed`` (same seed -> same problem). Computed once and cached;
        each call returns its own copy of ``data``/``answer`` (plain, JSON-serialisable values)."""
        v = _variant(self.name, int(seed))
        return replace(v, data=copy.deepcopy(v.data), answer=copy.deepcopy(v.answer))

    def wrong_answers(self, variant: Variant) -> dict[str, Any]:
        """The answer each applicable misconception produces for ``variant`` (those that
        coincide with the right answer for these numbers are left out)."""
        expected = parse(variant.answer, self.kind)
        out = {}
        for name, wrong in self.mistakes.items():
            try:
                value = wrong(variant.data)
            except Exception:  # noqa: BLE001 - a mistake that cannot be computed here simply does not apply
                continue
            if value is None:  # this mistake does not apply to these numbers
                continue
            try:
                if compare(expected, parse(value, self.kind), self.kind, self.decimals) is None:
                    continue
            except AnswerFormatError:
                pass
            out[name] = value
        return out

    def check(self, variant: Variant, answer: Any) -> Feedback:
        """Check ``answer`` (any accepted form, see attnlab.practice.answers) for ``variant``."""
        if variant.skill != self.name:
            raise ValueError(f"variant belongs to skill {variant.skill!r}, not {self.name!r}")
        try:
            given = parse(answer, self.kind)
        except AnswerFormatError as err:
            return Feedback(False, f"I could not read that answer: {err}")
        expected = parse(variant.answer, self.kind)
        diff = compare(expected, given, self.kind, self.decimals)
        if diff is None:
            return Feedback(True, "Correct.")
        for name, wrong in self.wrong_answers(variant).items():
            try:
                if compare(parse(wrong, self.kind), given, self.kind, self.decimals) is None:
                    m = get_misconception(name)
                    return Feedback(False, f"Not quite: it looks like {m.title}. {m.why}", misconception=name)
            except AnswerFormatError:
                continue
        return Feedback(False, _describe(diff, self), where=diff.where)


def _plain_result(fn: Callable[[Mapping[str, Any]], Any]) -> Callable[[Mapping[str, Any]], Any]:
    @functools.wraps(fn)
    def call(data: Mapping[str, Any]) -> Any:
        return plain(fn(data))

    return call


def _describe(diff: Difference, skill: Skill) -> str:
    """Point at the first wrong entry without giving the expected value away."""
    precision = f" (to {skill.decimals} decimals)" if skill.decimals is not None else ""
    if diff.reason == "shape":
        return (f"Your answer has shape {diff.given_shape}, but this result has shape {diff.expected_shape}. "
                "Check which axis is which.")
    if diff.reason == "length" and skill.kind == "shape":
        return (f"Your shape has {diff.given_shape[0]} axes but this tensor has {diff.expected_shape[0]}. "
                "Give one entry per axis.")
    if diff.reason == "length":
        return (f"Your answer has {diff.given_shape[0]} entries but should have {diff.expected_shape[0]}. "
                "Check that you have one entry per item asked for.")
    if not diff.where:
        return f"{diff.given} is not right{precision}. Recheck the computation (a hint shows the method)."
    if skill.kind in ("shape", "int_list", "int_set", "vector"):
        label = f"entry {diff.where[0]} (counting from 0)"
    elif len(diff.where) == 2:
        label = f"row {diff.where[0]}, column {diff.where[1]} (counting from 0)"
    else:
        label = f"entry {list(diff.where)} (counting from 0)"
    given = diff.given
    if skill.kind == "mask":
        given = "True (may attend)" if bool(given) else "False (blocked)"
    return f"The first wrong entry is {label}: your value {given} is off{precision}. Earlier entries are right."


# ----------------------------------------------------------------------------- registry
_REGISTRY: dict[str, Skill] = {}


def register(skill: Skill) -> Skill:
    """Add ``skill`` to the registry (names must be unique)."""
    if skill.name in _REGISTRY:
        raise ValueError(f"skill {skill.name!r} registered twice")
    _REGISTRY[skill.name] = skill
    return skill


def _load() -> dict[str, Skill]:
    from . import skills  # noqa: F401  (importing the package registers every skill)

    return _REGISTRY


def all_skills() -> list[Skill]:
    """Every registered skill, ordered by lesson then registration order."""
    return sorted(_load().values(), key=lambda s: s.lesson)


def skills_for_lesson(lesson: str | int) -> list[Skill]:
    """Skills taught in ``lesson``."""
    lid = lesson_id(lesson)
    return [s for s in all_skills() if s.lesson == lid]


def get_skill(name: str) -> Skill:
    """The skill called ``name``. Raises KeyError with close matches if unknown."""
    registry = _load()
    if name in registry:
        return registry[name]
    close = difflib.get_close_matches(name, registry, n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else " Run `attnlab skills` to list them."
    raise KeyError(f"unknown skill {name!r}.{hint}")


@functools.lru_cache(maxsize=512)
def _variant(name: str, seed: int) -> Variant:
    skill = get_skill(name)
    rng = random.Random(seed)
    prompt, data = skill.build(rng)
    answer = plain(skill.solve(data))
    return Variant(name, seed, prompt, data, answer, skill.kind, skill.decimals, skill.tables)
