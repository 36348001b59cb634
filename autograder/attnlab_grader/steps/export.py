"""Grades CSV that also says *why*: an nbgrader ``ExportPlugin`` adding status and flags.

Plain ``nbgrader export`` shows a crashed or rejected submission as ``0.0``, exactly like
a wrong one.  This plugin adds ``status``, the autograded score, and the reasons, from the
reports the grading steps write under ``<course>/reports/<assignment>/<student>.json``.
attnlab's nbgrader configuration makes it nbgrader's default exporter, so from the repository
root ``nbgrader export`` (or ``nbgrader export --exporter=attnlab_grader.steps.export.AttnlabCsvExport``)
writes ``<course>/grades.csv`` with these columns.

``status``: ``graded``; ``manual_pending`` (autograded, but the assignment's manually graded
answers are not graded yet, so ``score`` is not final); ``flagged`` (the grader withheld
credit for review, see ``flags``; ``python -m attnlab_grader clear-flag``; or flagged by a person in
formgrader: nbgrader's own ``flagged`` decides, so unflagging there is seen here too); ``error``
(not graded, ``reason`` says why; ``score`` empty).  A student the gradebook knows who submitted nothing and has
no report gets no row (:func:`status_of` calls that case ``missing``).  The export *merges* into the sheet
(:mod:`attnlab_grader.records.gradesheet`: rows keyed by assignment and student, written
atomically under a file lock), so the sheet holds every assignment exported so far.
``reason`` is in words for people (:mod:`attnlab_grader.records.reasons`).  Deadlines
(:mod:`attnlab_grader.records.deadlines`): ``due`` (with the student's extension), ``extension``,
``late_by``, ``late_penalty`` (points, nbgrader's ``late_submission_penalty``, recomputed from the
gradebook at every export) and ``final_score`` = ``score`` − ``late_penalty``.  A ``manual_pending`` row
whose written answer changed after a person graded it names those items in ``reason``.  ``failed_items``: each item that earned nothing,
as ``grade_id: kind (named mistake)`` from its verdict (:func:`attnlab_grader.judging.verdict.failed_items`).
Text cells pass through :func:`attnlab_grader.records.intake.csv_cell` (no control characters, no
spreadsheet formulas).
"""
from __future__ import annotations

import os

from nbgrader.plugins import ExportPlugin
from traitlets import Unicode

from attnlab_grader.records.grade_report import read_report
from attnlab_grader.steps.answers import changed_since_manual
from attnlab_grader.records.deadlines import describe, reapply_in
from attnlab_grader.records.gradesheet import merge
from attnlab_grader.records.reasons import reason_text
from attnlab_grader.records.intake import csv_cell
from attnlab_grader.judging.verdict import failed_items

FIELDS = ["assignment", "student_id", "score", "max_score", "autograded_score", "status",
          "flags", "failed_items", "reason", "due", "extension", "late_by", "late_penalty", "final_score"]


def status_of(report: dict | None, submission) -> str:
    """One submission's status (see the module docstring); ``submission`` is nbgrader's
    ``Submission`` or None when the student has none.  Once graded, formgrader's flag (nbgrader's
    ``SubmittedNotebook.flagged``, which the grader sets when it flags) decides ``flagged``."""
    if submission is None:
        return "missing" if report is None else report.get("status", "error")
    status = report.get("status", "error") if report else "graded"
    if status == "error":
        return status
    if any(nb.flagged for nb in submission.notebooks):
        return "flagged"
    return "manual_pending" if submission.needs_manual_grade else "graded"


class AttnlabCsvExport(ExportPlugin):
    """Export one row per (assignment, student) with score, status and reasons."""

    course_root = Unicode("", help="Course root holding reports/ (default: the course directory "
                          "of the nbgrader configuration, CourseDirectory.root).").tag(config=True)

    def _root(self) -> str:
        if self.course_root:
            return self.course_root
        coursedir = getattr(self.parent, "coursedir", None)
        if coursedir is None:
            from nbgrader.coursedir import CourseDirectory
            coursedir = CourseDirectory(config=self.config)
        return coursedir.root

    def export(self, gradebook):
        """Merge this export's rows into ``to`` (default ``<course>/grades.csv``); returns its path."""
        root = self._root()
        dest = self.to or os.path.join(root, "grades.csv")
        rows = []
        for assignment in gradebook.assignments:
            if self.assignment and assignment.name not in self.assignment:
                continue
            reapply_in(gradebook, assignment.name)  # penalties from the scores as they are now
            gradebook.db.commit()
            # students with a submission in the gradebook, and those refused before nbgrader saw them (a student
            # with neither gets no row, so the gradebook's other students need no look-up: the cost follows the
            # submissions, not students x assignments)
            reports = os.path.join(root, "reports", assignment.name)
            ids = {sub.student_id for sub in assignment.submissions} | (
                {n[:-5] for n in os.listdir(reports) if n.endswith(".json")} if os.path.isdir(reports) else set())
            for student_id in sorted(ids):
                if self.student and student_id not in self.student:
                    continue
                rep = read_report(root, assignment.name, student_id)
                try:
                    sub = gradebook.find_submission(assignment.name, student_id)
                    score, auto = sub.score, sub.code_score
                except Exception:  # noqa: BLE001 - nbgrader raises MissingEntry
                    sub, score, auto = None, 0.0, 0.0
                late = describe(sub) if sub is not None else {"late_penalty": 0.0}
                if sub is None and rep is None:
                    continue
                status = status_of(rep, sub)
                extra = []
                if status == "manual_pending":
                    changed = changed_since_manual(sub)
                    extra.append("answer changed since it was graded by hand, grade again in formgrader: "
                                 + ", ".join(changed) if changed else
                                 "manually graded answers not graded yet (formgrader)")
                if rep and rep.get("status") == "flagged" and status != "flagged":
                    extra.append("flag cleared in formgrader")
                elif status == "flagged" and not (rep and rep.get("flags")):
                    extra.append("flagged in formgrader")
                rows.append({
                    "assignment": csv_cell(assignment.name), "student_id": csv_cell(student_id),
                    "score": score if status != "error" else "",
                    "max_score": assignment.max_score, "autograded_score": auto if status != "error" else "",
                    "status": status,
                    "flags": csv_cell(" | ".join(rep.get("flags", []))) if rep else "",
                    "failed_items": csv_cell(failed_items(rep.get("items", {}))) if rep else "",
                    "reason": csv_cell(reason_text(rep, extra)),
                    **late, "final_score": round(max(0.0, score - late["late_penalty"]), 6)
                    if status != "error" else ""})
        merge(dest, rows, FIELDS)
        return dest
