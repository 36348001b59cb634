"""The one record type of the mastery engine: a learner's state on one skill.

:class:`SkillRecord` is frozen; every change is a new record made by
:func:`attnlab.practice.mastery.transition`. Its fields *are* the schema: the store
writes ``record.to_json()`` and reads ``SkillRecord.from_json(obj)``, which checks every
field's type against the dataclass annotations (there is no second copy of the schema).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from fsrs.card import CardDict

HISTORY = 30  # answers kept per skill

#: JSON types accepted for each annotation used below.
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,), "bool": (bool,), "float": (int, float), "str": (str,),
    "int | None": (int, type(None)), "float | None": (int, float, type(None)), "str | None": (str, type(None)),
    "tuple[str, ...]": (list, tuple), "tuple[tuple, ...]": (list, tuple), "CardDict | None": (dict, type(None)),
}


@dataclass(frozen=True)
class SkillRecord:
    """A learner's state on one skill (see docs/mastery.md).

    Open problem: ``current`` (attempt index of the open variant, None: none open), ``kind`` (its
    kind of problem), ``misses`` (wrong answers to it), ``hinted`` (hint tier shown: 0, 1, 2),
    ``shown`` (worked answer shown), ``solved`` (answered right: closed), ``review`` (it is a
    spaced-review item). Serving: ``served`` (next attempt index to try), ``last_key`` (the
    answer of the previously served problem, to avoid serving the same answer twice in a row).
    Mastery: ``streak`` (counted answers in a row), ``run_kinds`` (kinds of problem met in the
    run), ``mastered``, ``mastered_at``, ``mastered_lesson``. Review: ``due_at`` (epoch seconds),
    ``due_lesson`` (None past the last lesson), ``interval_days`` (days to the review FSRS scheduled),
    ``interval_lessons``, ``card`` (the FSRS memory state, ``fsrs.Card.to_dict()``; None before the
    first scheduling: a record written before FSRS is migrated from its interval when next scheduled).
    Totals: ``attempts``, ``correct``, ``hints``; ``history``: the last answers as
    ``(time, correct, hint tier, misconception or None)``.
    """

    served: int = 0
    current: int | None = None
    kind: str = ""
    misses: int = 0
    hinted: int = 0
    shown: bool = False
    solved: bool = False
    review: bool = False
    last_key: str = ""
    streak: int = 0
    run_kinds: tuple[str, ...] = ()
    mastered: bool = False
    mastered_at: float | None = None
    mastered_lesson: str | None = None
    due_at: float | None = None
    due_lesson: str | None = None
    interval_days: float = 3.0
    interval_lessons: int = 2
    card: CardDict | None = None
    attempts: int = 0
    correct: int = 0
    hints: int = 0
    history: tuple[tuple, ...] = field(default=())

    @property
    def open(self) -> bool:
        """True while a problem is open (served and not solved)."""
        return self.current is not None and not self.solved

    @property
    def clean(self) -> bool:
        """True if the open problem has had no miss, hint or worked answer (its answer may count)."""
        return self.misses == 0 and self.hinted == 0 and not self.shown

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-ready dict (tuples become lists)."""
        out = asdict(self)
        out["run_kinds"] = list(self.run_kinds)
        out["history"] = [list(h) for h in self.history]
        out["card"] = dict(self.card) if self.card is not None else None
        return out

    @classmethod
    def from_json(cls, obj: Any) -> "SkillRecord | None":
        """The record stored as ``obj`` (missing fields take their defaults, unknown keys are ignored),
        or None if ``obj`` is not a dict or a field has the wrong type or an impossible value."""
        if not isinstance(obj, dict):
            return None
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in obj:
                continue
            value = obj[f.name]
            allowed = _JSON_TYPES[str(f.type)]
            if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
                return None
            if f.name == "run_kinds":
                if not isinstance(value, (list, tuple)) or not all(isinstance(k, str) for k in value):
                    return None
                value = tuple(value)
            elif f.name == "card" and isinstance(value, dict):
                try:
                    from fsrs import Card

                    # Not yet known to be a CardDict: from_dict is the check (a missing key or a
                    # wrong-typed value raises, caught below), so the cast only names what it expects.
                    Card.from_dict(cast("CardDict", value))
                except (KeyError, TypeError, ValueError):
                    return None
                value = dict(value)
            elif f.name == "history":
                if not isinstance(value, (list, tuple)) or not all(
                        isinstance(h, (list, tuple)) and len(h) == 4 for h in value):
                    return None
                value = tuple(tuple(h) for h in value)[-HISTORY:]
            values[f.name] = value
        if "checked" in obj and "misses" not in obj and obj.get("checked") is True and not obj.get("solved"):
            values["misses"] = 1  # schema 1: an answered, unsolved problem had a miss
        record = cls(**values)
        if record.served < 0 or record.streak < 0 or record.misses < 0 or record.hinted not in (0, 1, 2):
            return None
        return record

    def but(self, **changes: Any) -> "SkillRecord":
        """A copy with ``changes`` (``dataclasses.replace``)."""
        return replace(self, **changes)
