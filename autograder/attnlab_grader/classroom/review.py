"""Instructor actions on graded submissions: ``python -m attnlab_grader clear-flag``.

The grader *flags* a submission (report status ``flagged``, nbgrader's own ``flagged`` on the
submitted notebook, which formgrader shows) when it withholds credit for review: suspicious code
(every item's credit withheld), an edited test cell, a library call where the exercise asks for
an implementation.  When the instructor has reviewed it and finds it innocent, clearing it is one
action: :func:`clear_flag` unflags the notebook in the gradebook, restores the credit of every
item that *passed* but was withheld (as a formgrader score override, ``manual_score``, so a later
re-grade with the same verdict does not undo it), updates the report and the course's grades CSV,
and regenerates that student's feedback.  Items that failed on their own merits stay at 0.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field, replace
from pathlib import Path


class ReviewError(RuntimeError):
    """The action cannot be done (no such graded submission); the message says why."""


@dataclass
class Cleared:
    """What :func:`clear_flag` did: items whose credit came back, items left at 0, flags cleared."""

    restored: dict[str, float] = field(default_factory=dict)
    unchanged: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    csv: list[Path] = field(default_factory=list)

    def text(self, student: str) -> str:
        """One line for the instructor: how many flags of ``student`` were cleared and the credit restored."""
        from attnlab_grader.records.intake import safe_text
        out = [f"cleared {len(self.flags)} flag(s) of {safe_text(student)}; credit restored: "
               + (", ".join(f"{g} (+{p:g})" for g, p in self.restored.items()) or "none")]
        if self.unchanged:
            out.append("still no credit (the item failed on its own, not only for review): "
                       + ", ".join(self.unchanged))
        out += [f"updated {p}" for p in self.csv]
        return "\n".join(out)


def clear_flag(root, assignment: str, student: str, db_url: str | None = None,
               feedback: bool = True) -> Cleared:
    """Clear the grader's flag on ``student``'s ``assignment`` in the course at ``root``.

    Raises :class:`ReviewError` when the student has no graded report for the assignment or the
    submission is not flagged (by the grader or in formgrader)."""
    from nbgrader.api import Gradebook, MissingEntry

    from attnlab_grader.records.course import load_config
    from attnlab_grader.records.grade_report import read_report, write_report
    root = Path(root).resolve()
    report = read_report(str(root), assignment, student)
    if report is None or report.get("status") == "error" or not report.get("items"):
        raise ReviewError(f"no graded submission of {assignment} for {student!r} in {root} "
                          "(grade it first: python -m attnlab_grader grade)")
    cfg = load_config(root, db_url)
    done = Cleared(flags=list(report.get("flags", [])))
    with Gradebook(cfg.CourseDirectory.db_url, cfg.CourseDirectory.course_id) as gb:
        try:
            subs = gb.find_submission(assignment, student).notebooks
        except MissingEntry:
            raise ReviewError(f"the gradebook has no submission of {assignment} by {student!r}") from None
        if report.get("status") != "flagged" and not any(nb.flagged for nb in subs):
            raise ReviewError(f"{student!r}'s {assignment} is not flagged; nothing to clear")
        for nb in subs:
            nb.flagged = False
            for grade in nb.grades:
                verdict = report["items"].get(grade.name)
                if verdict is None:
                    continue
                if verdict.withheld:
                    grade.manual_score = grade.max_score
                    done.restored[grade.name] = float(grade.max_score or 0)
                elif not verdict.ok:
                    done.unchanged.append(grade.name)
        gb.db.commit()
    for gid, points in done.restored.items():
        report["items"][gid] = replace(report["items"][gid], ok=True, max_points=points, withheld=False,
                                       reason="passes (credit restored by the instructor after review)")
    report.update(status="graded", flags=[], cleared_flags=done.flags,
                  score=sum(v.points for v in report["items"].values()))
    write_report(str(root), assignment, student, report)
    done.csv = _refresh_csvs(root, assignment, db_url)
    if feedback and (root / "feedback" / student / assignment).is_dir():
        from attnlab_grader.records.course import api_for
        from attnlab_grader.records.intake import feedback_exact
        res = feedback_exact(api_for(root, db_url), assignment, [student])
        if not res["success"]:
            raise ReviewError(f"the flag was cleared but the feedback could not be regenerated: "
                              f"{(res.get('error') or '').strip().splitlines()[-1:]}")
    return done


def _refresh_csvs(root: Path, assignment: str, db_url) -> list[Path]:
    """Re-export every ``grades*.csv`` of the course that holds ``assignment`` (same assignments)."""
    from attnlab_grader.classroom.pipeline import export
    out = []
    for path in sorted(root.glob("grades*.csv")):
        with open(path, newline="", encoding="utf-8") as fh:
            names = {r.get("assignment") for r in csv.DictReader(fh)}
        if assignment in names:
            export(root, sorted(n for n in names if n), db_url, path)
            out.append(path)
    return out
