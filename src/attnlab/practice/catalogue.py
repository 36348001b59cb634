"""The catalogue of every practice skill: the registry filled by importing :mod:`attnlab.practice.skills`.

:mod:`attnlab.practice.core` defines what a skill is and :func:`attnlab.practice.core.register`; each module of
``skills/`` registers its skills when imported; this module imports them all once and answers "which skills are
there": :func:`all_skills`, :func:`skills_for_lesson`, :func:`get_skill`.  It sits above both, so the skills import
the core and never the other way round.
"""
from __future__ import annotations

from . import skills  # noqa: F401  (importing the package registers every skill)
from .core import _REGISTRY, Skill, lesson_id, lookup

__all__ = ["all_skills", "skills_for_lesson", "get_skill"]


def _load() -> dict[str, Skill]:
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
    return lookup(name)
