"""One graded item's judgement: :class:`Verdict`, from the check that made it to every reader of a report.

A check of a grading spec (:mod:`attnlab_grader.judging.spec`, :mod:`attnlab_grader.judging.by_hand`, the sets'
``grading.py``) returns a Verdict; :func:`attnlab_grader.judging.engine.judge_notebook` returns one per test cell;
a student's report file (:mod:`attnlab_grader.records.grade_report`) stores each as its JSON form
(:meth:`Verdict.to_json`) and reads it back as a Verdict (:meth:`Verdict.from_json`); the grades sheet, the class
report, review and the feedback read its fields, never its message text.

Why an item earned nothing is a :class:`Kind`, stored in a report as its ``kind`` code (:attr:`Verdict.code`):
the value of a :class:`Kind`, or ``"raised <ExceptionName>"`` for an item whose code raised
(:data:`Kind.RAISED` with :attr:`Verdict.exception`).  These codes are persisted in the report files of running
classes: they never change.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Kind(StrEnum):
    """Why an item earned nothing (``PASSED`` when it earned its points): the fixed names the class report groups
    failures by.  Each value is the ``kind`` code stored in report files."""

    PASSED = "passed"
    NAMED_MISTAKE = "named mistake"
    TAMPERED = "test cell tampered with"
    HELD = "held for review (suspicious code)"
    LIBRARY = "used the library version"
    UNSUPPORTED = "returned an unsupported type"
    TIMED_OUT = "timed out (an infinite loop?)"
    OUT_OF_MEMORY = "ran out of memory"
    CRASHED = "crashed (sys.exit or the process died)"
    NOT_ATTEMPTED = "not attempted (stub left)"
    NOT_ANSWERED = "not answered"
    WRITTEN_AS_CODE = "by-hand answer written as code"
    NOT_PYTHON = "answer cell is not valid Python"
    UNREADABLE = "answer in a form that cannot be read"
    WRONG_SHAPE = "wrong shape"
    WRONG_DTYPE = "wrong dtype (mask not bool)"
    NON_FINITE = "NaN/inf where none belong"
    RETURNED_NONE = "returned None"
    WRONG_COUNT = "wrong number of returned values"
    WRONG_VALUES = "wrong values (no known mistake)"
    NESTED = "returned a value nested too deeply"
    OTHER = "other"
    #: the code raised an exception, named by :attr:`Verdict.exception` (code ``"raised <name>"``)
    RAISED = "raised"
    #: an item of a report written by a grader whose verdicts carried no kind (read back, never made):
    #: the class report says so instead of guessing from the message text
    UNCLASSIFIED = "not classified (graded by an older grader: grade again)"


# The kinds under their module-level names (``V.PASSED``), as the grading specs use them.
PASSED = Kind.PASSED
NAMED_MISTAKE = Kind.NAMED_MISTAKE
TAMPERED = Kind.TAMPERED
HELD = Kind.HELD
LIBRARY = Kind.LIBRARY
UNSUPPORTED = Kind.UNSUPPORTED
TIMED_OUT = Kind.TIMED_OUT
OUT_OF_MEMORY = Kind.OUT_OF_MEMORY
CRASHED = Kind.CRASHED
NOT_ATTEMPTED = Kind.NOT_ATTEMPTED
NOT_ANSWERED = Kind.NOT_ANSWERED
WRITTEN_AS_CODE = Kind.WRITTEN_AS_CODE
NOT_PYTHON = Kind.NOT_PYTHON
UNREADABLE = Kind.UNREADABLE
WRONG_SHAPE = Kind.WRONG_SHAPE
WRONG_DTYPE = Kind.WRONG_DTYPE
NON_FINITE = Kind.NON_FINITE
RETURNED_NONE = Kind.RETURNED_NONE
WRONG_COUNT = Kind.WRONG_COUNT
WRONG_VALUES = Kind.WRONG_VALUES
NESTED = Kind.NESTED
OTHER = Kind.OTHER
RAISED = Kind.RAISED
UNCLASSIFIED = Kind.UNCLASSIFIED

_RAISED_PREFIX = "raised "


def raised(exception_name: str) -> tuple[Kind, str | None]:
    """``(kind, exception)`` of an item whose code raised ``exception_name`` (a class name such as
    ``"ValueError"``): :data:`NOT_ATTEMPTED` for ``NotImplementedError`` (the stub left in place), else
    :data:`RAISED` with the name."""
    return (NOT_ATTEMPTED, None) if exception_name == "NotImplementedError" else (RAISED, exception_name)


def kind_from_code(code: Any) -> tuple[Kind, str | None]:
    """``(kind, exception)`` of a stored ``kind`` code (:attr:`Verdict.code`): a :class:`Kind` value, or
    ``"raised <ExceptionName>"``.  A missing, empty or unknown code is :data:`UNCLASSIFIED` (an item written by a
    grader whose verdicts carried no kind, or a damaged file)."""
    if isinstance(code, str):
        if code in Kind._value2member_map_:
            kind = Kind(code)
            return (kind, None) if kind is not RAISED else (UNCLASSIFIED, None)
        name = code[len(_RAISED_PREFIX):] if code.startswith(_RAISED_PREFIX) else ""
        if name.isidentifier():
            return raised(name)
    return UNCLASSIFIED, None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _points(value: Any) -> float:
    try:
        return float(value or 0)
    except (TypeError, ValueError):
        return 0.0


@dataclass(frozen=True)
class Verdict:
    """One item's judgement (immutable: :func:`dataclasses.replace` makes a changed copy).

    ``ok``: full credit; ``reason``: what the student reads (feedback, report); ``kind``: a :class:`Kind`
    (``PASSED`` whenever ``ok``; left at ``WRONG_VALUES`` with a ``mistake`` named, it is ``NAMED_MISTAKE``);
    ``exception``: the class name of the exception raised, when ``kind`` is :data:`RAISED`;
    ``mistake``/``mistakes``: the catalogue names of the known mistake(s) the values match
    (``attnlab.practice.misconceptions``; ``mistake`` is the first); ``flag``: why the item is held for the
    instructor's review; ``withheld``: the values were right but credit is held; ``evidence``: what the judgement
    rests on beyond the reason (forbidden operations seen, cells not run), for the instructor; ``max_points``: the
    item's points (its test cell's nbgrader metadata; 0 until the engine sets it)."""

    ok: bool
    reason: str
    kind: Kind = WRONG_VALUES
    mistake: str | None = None
    mistakes: tuple[str, ...] = ()
    flag: str | None = None
    withheld: bool = False
    evidence: tuple[str, ...] = ()
    exception: str | None = None
    max_points: float = 0.0

    def __post_init__(self):
        kind = Kind(self.kind)
        if self.ok:
            kind = PASSED
        elif self.mistake and kind is WRONG_VALUES:
            kind = NAMED_MISTAKE
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "exception", self.exception if kind is RAISED else None)
        mistakes = tuple(self.mistakes)
        object.__setattr__(self, "mistakes", (self.mistake,) if self.mistake and not mistakes else mistakes)
        object.__setattr__(self, "evidence", tuple(self.evidence))

    @property
    def message(self) -> str:
        """The same text as :attr:`reason` (the report item's ``message``)."""
        return self.reason

    @property
    def points(self) -> float:
        """Points awarded: :attr:`max_points` when ``ok``, else 0."""
        return self.max_points if self.ok else 0.0

    @property
    def code(self) -> str:
        """The stored ``kind`` code: the :class:`Kind` value, or ``"raised <ExceptionName>"``."""
        if self.kind is RAISED:
            return f"{_RAISED_PREFIX}{self.exception or 'an exception'}"
        return self.kind.value

    def __str__(self) -> str:
        return self.reason

    def to_json(self) -> dict:
        """The report file's item: ``{ok, message, points, max_points, flag, withheld, mistake, mistakes, kind,
        evidence}`` (``kind``: :attr:`code`)."""
        return {"ok": self.ok, "message": self.reason, "points": self.points,
                "max_points": self.max_points, "flag": self.flag, "withheld": self.withheld,
                "mistake": self.mistake, "mistakes": list(self.mistakes), "kind": self.code,
                "evidence": list(self.evidence)}

    @classmethod
    def from_json(cls, item: dict) -> Verdict:
        """The Verdict of a report file's item (:meth:`to_json`'s form).  Tolerant of older and damaged
        files: a missing key gets its empty value, a failed item without a readable ``kind`` is
        :data:`UNCLASSIFIED` (never guessed from its message), values of the wrong type are dropped.
        Raises ``TypeError`` when ``item`` is not a dict."""
        if not isinstance(item, dict):
            raise TypeError(f"a report item is a JSON object, not {type(item).__name__}")
        ok = bool(item.get("ok"))
        kind, exception = (PASSED, None) if ok else kind_from_code(item.get("kind"))
        mistakes = item.get("mistakes")
        evidence = item.get("evidence")
        return cls(ok=ok, reason=str(item.get("message") or ""), kind=kind, exception=exception,
                   mistake=_text(item.get("mistake")),
                   mistakes=tuple(m for m in mistakes if isinstance(m, str)) if isinstance(mistakes, list) else (),
                   flag=_text(item.get("flag")), withheld=bool(item.get("withheld")),
                   evidence=tuple(str(e) for e in evidence) if isinstance(evidence, list) else (),
                   max_points=_points(item.get("max_points")))


def failed_items(items: dict[str, Verdict]) -> str:
    """One cell of the grades sheet: each failed item of a report as ``grade_id: kind`` (its :attr:`Verdict.code`,
    with the named mistake's catalogue name in brackets), joined with `` | ``, in report order; ``""`` when every
    item earned its points.  ``items``: the report's ``{grade_id: Verdict}``."""
    return " | ".join(f"{gid}: {v.code}" + (f" ({v.mistake})" if v.mistake else "")
                      for gid, v in items.items() if not v.ok)
