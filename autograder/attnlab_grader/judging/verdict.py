"""One graded item's judgement: :class:`Verdict`, made where the judgement is made.

The sandbox step (:mod:`attnlab_grader.steps.sandbox_grade`) builds one per item from what the check found
(a comparison, a named mistake, a timeout, a library call, tampering...) and writes it into the
student's report with :meth:`Verdict.item`; the class report (:mod:`attnlab_grader.reports.class_report`) reads its
``kind`` and ``mistake`` fields as they are, never re-reading the message text.
"""
from __future__ import annotations

from dataclasses import dataclass, field

#: The fixed names of why an item earned nothing (the class report groups failures by them).
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
#: An item of a report written by a grader whose verdicts carried no kind (read back, never made):
#: the class report says so instead of guessing from the message text.
UNCLASSIFIED = "not classified (graded by an older grader: grade again)"


def raised(exception_name: str) -> str:
    """The kind of an item whose code raised ``exception_name`` (``"raised ValueError"``)."""
    return NOT_ATTEMPTED if exception_name == "NotImplementedError" else f"raised {exception_name}"


@dataclass
class Verdict:
    """One item's judgement.

    ``ok``: full credit; ``reason``: what the student reads (feedback, report); ``kind``: one of the
    fixed names above (``PASSED`` when ok); ``mistake``/``mistakes``: the catalogue names of the
    known mistake(s) the values match (``attnlab.practice.misconceptions``); ``flag``: why the item
    is held for the instructor's review; ``withheld``: the values were right but credit is held;
    ``evidence``: what the judgement rests on beyond the reason (forbidden operations seen, cells
    not run), for the instructor."""

    ok: bool
    reason: str
    kind: str = OTHER
    mistake: str | None = None
    mistakes: tuple[str, ...] = ()
    flag: str | None = None
    withheld: bool = False
    evidence: list[str] = field(default_factory=list)

    def __post_init__(self):
        if self.ok:
            self.kind = PASSED
        if self.mistake and not self.mistakes:
            self.mistakes = (self.mistake,)
        if self.mistake and self.kind == OTHER:
            self.kind = NAMED_MISTAKE

    @property
    def message(self) -> str:
        """The same text as :attr:`reason` (the report item's ``message``)."""
        return self.reason

    def __str__(self) -> str:
        return self.reason

    def item(self, max_points: float) -> dict:
        """The report's item (``attnlab_grader.records.grade_report.ItemResult`` plus ``kind`` and ``evidence``)."""
        return {"ok": self.ok, "message": self.reason, "points": max_points if self.ok else 0.0,
                "max_points": max_points, "flag": self.flag, "withheld": self.withheld,
                "mistake": self.mistake, "mistakes": list(self.mistakes), "kind": self.kind,
                "evidence": list(self.evidence)}


def item_kind(item: dict) -> str:
    """The kind of one report item as the grader wrote it (``item["kind"]``); :data:`PASSED` for a
    full-credit item; :data:`UNCLASSIFIED` for a failed item written before verdicts carried their
    kind (read back from an older report: never guessed from its message)."""
    if item.get("ok"):
        return PASSED
    kind = item.get("kind")
    return kind if isinstance(kind, str) and kind.strip() else UNCLASSIFIED


def failed_items(items: dict) -> str:
    """One cell of the grades sheet: each failed item of a report as ``grade_id: kind`` (with the
    named mistake's catalogue name in brackets), joined with `` | ``, in report order; ``""`` when
    every item earned its points.  ``items``: the report's ``{grade_id: item}``."""
    out = []
    for gid, item in items.items():
        if not isinstance(item, dict) or item.get("ok"):
            continue
        mistake = item.get("mistake")
        out.append(f"{gid}: {item_kind(item)}" + (f" ({mistake})" if isinstance(mistake, str) and mistake else ""))
    return " | ".join(out)
