"""A student's grade report: ``COURSE/reports/<assignment>/<student>.json``.

This module is its one home: the type (:class:`GradeReport`, whose items are
:class:`attnlab_grader.judging.verdict.Verdict`), the one writer (:func:`write_report`: each item as
:meth:`Verdict.to_json <attnlab_grader.judging.verdict.Verdict.to_json>`), the one reader (:func:`read_report`, and
:func:`read_reports` for a whole assignment: each item read back with
:meth:`Verdict.from_json <attnlab_grader.judging.verdict.Verdict.from_json>`) and the report of a submission that
could not be graded (:func:`error_report`).
Written by the grading steps (:mod:`attnlab_grader.steps.verify`, :mod:`attnlab_grader.steps.sandbox_grade`), the
pipeline and ``review``; read by the pipeline, ``review``, ``export`` (``grades.csv``) and
``report`` (the class page).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, TypedDict

from attnlab_grader.judging.verdict import Verdict
from attnlab_grader.records.intake import safe_json

#: ``graded``: every item scored; ``flagged``: scored, held for the instructor's review (some
#: credit withheld); ``error``: not graded (``reason`` says why); ``unknown``: a report file
#: without a status (read back from an older or damaged file).
Status = Literal["graded", "flagged", "error", "unknown"]


class KeptPrevious(TypedDict):
    """Re-grading failed and the earlier result was kept: ``why`` the grader could not run, in words (``""``
    when it gave no reason)."""
    why: str


class GradeReport(TypedDict, total=False):
    """A student's result for one assignment.  Always present after :func:`read_report`:
    ``student``, ``assignment``, ``status``, ``items``, ``flags``."""
    student: str
    assignment: str
    status: Status
    items: dict[str, Verdict]  #: one per graded item (an nbgrader test cell), keyed by its ``grade_id``
    flags: list[str]
    reason: str             #: status ``error``: what was wrong, in words
    sandbox: str            #: the isolation mechanism and limits in force
    score: float
    max_score: float
    kept_previous: KeptPrevious  #: re-grading failed and this earlier result was kept
    notes: list[str]        #: remarks about the submission folder (intake)
    seconds: float          #: wall time of this submission's grading
    cleared_flags: list[str]  #: flags the instructor cleared (``review``)
    back_to_manual: list[str]  #: items a person had graded whose answer changed: they wait for manual grading again


def error_report(student: str, assignment: str, reason: str) -> GradeReport:
    """The report of a submission that could not be graded, ``reason`` saying why."""
    return {"student": student, "assignment": assignment, "status": "error", "reason": reason,
            "items": {}, "flags": []}


def report_path(root: str, assignment: str, student: str) -> Path:
    """``root/reports/<assignment>/<student>.json``."""
    return Path(root) / "reports" / assignment / f"{student}.json"


def write_report(root: str, assignment: str, student: str, report: GradeReport) -> None:
    """Write ``report``: its items as :meth:`Verdict.to_json <attnlab_grader.judging.verdict.Verdict.to_json>`, every
    string passed through :func:`attnlab_grader.records.intake.safe_text` (a submission's text never reaches a
    terminal or a spreadsheet raw)."""
    path = report_path(root, assignment, student)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = dict(report, items={g: v.to_json() for g, v in report.get("items", {}).items()})
    path.write_text(json.dumps(safe_json(data), indent=1))


class _NotAReport(ValueError):
    """The file holds JSON that is not an object."""


def _parse(path: Path, assignment: str) -> GradeReport:
    """Read one report file; raises ``OSError``, ``ValueError`` (not JSON) or :class:`_NotAReport`.
    Missing or malformed common keys get their empty values; each item is read into a
    :class:`attnlab_grader.judging.verdict.Verdict` (an item that is not a JSON object is left out); a
    ``kept_previous`` written as a sentence by an older grader becomes ``{"why": <that sentence>}``."""
    rep = json.loads(path.read_text())
    if not isinstance(rep, dict):
        raise _NotAReport(path.name)
    rep["student"] = str(rep.get("student", path.stem))
    rep.setdefault("assignment", assignment)
    items = rep.get("items")
    rep["items"] = {str(g): Verdict.from_json(it) for g, it in items.items() if isinstance(it, dict)} \
        if isinstance(items, dict) else {}
    kept = rep.get("kept_previous")
    if kept:
        # an older grader wrote a sentence: kept whole as the reason (never parsed), so nothing is lost
        why = kept.get("why") if isinstance(kept, dict) else kept
        rep["kept_previous"] = {"why": why if isinstance(why, str) else ""}
    else:
        rep.pop("kept_previous", None)
    if not isinstance(rep.get("flags"), list):
        rep["flags"] = [] if rep.get("flags") in (None, "") else [str(rep["flags"])]
    rep["status"] = str(rep.get("status") or "unknown")
    return rep


def read_report(root: str, assignment: str, student: str) -> GradeReport | None:
    """The report written by the last grading of ``student`` (None if there is none or it is unreadable)."""
    try:
        return _parse(report_path(root, assignment, student), assignment)
    except (OSError, ValueError):
        return None


def read_reports(root: str, assignment: str) -> tuple[list[GradeReport], list[str]]:
    """Every student's report for ``assignment`` (sorted by file name) and, for each file that
    could not be read, one line saying so (``"<file>: not readable (...)"``)."""
    reports, problems = [], []
    for path in sorted((Path(root) / "reports" / assignment).glob("*.json")):
        try:
            reports.append(_parse(path, assignment))
        except _NotAReport:
            problems.append(f"{path.name}: not a report object")
        except (OSError, ValueError) as err:
            problems.append(f"{path.name}: not readable ({type(err).__name__})")
    return reports, problems
