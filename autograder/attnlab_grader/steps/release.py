"""Releasing feedback always releases the current grades.

nbgrader's "Release feedback" (formgrader's button, ``nbgrader release_feedback``) copies whatever
``COURSE/feedback/`` holds; after manual grading, a regrade or a cleared flag that is the old
scores unless someone first pressed "Generate feedback".  :class:`CurrentReleaseFeedback`
(configured as ``c.ExchangeFactory.release_feedback`` in ``autograder/attnlab_grader/steps/nbgrader_config.py``)
regenerates the feedback of every autograded submission being released from the gradebook as
it is now, adds a notice to each student's page when their grades changed since their last
release (:mod:`attnlab_grader.records.history`) and a line with their due date, extension and
lateness (:mod:`attnlab_grader.records.deadlines`), and only then copies it to the exchange.  When the
feedback cannot be generated it refuses to release anything and says why.
"""
from __future__ import annotations

import os

from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback


def autograded_students(coursedir, assignment: str) -> list[str]:
    """Students with an autograded copy of ``assignment`` (``coursedir.student_id`` narrows,
    taken as a literal id; ``*`` or empty: all), sorted."""
    base = os.path.join(coursedir.root, coursedir.autograded_directory)
    wanted = coursedir.student_id if coursedir.student_id not in ("", "*") else None
    try:
        names = sorted(os.listdir(base))
    except FileNotFoundError:
        return []
    return [s for s in names if os.path.isdir(os.path.join(base, s, assignment))
            and (wanted is None or s == wanted)]


class FeedbackNotCurrent(RuntimeError):
    """Feedback could not be regenerated from the gradebook, so nothing was released."""


class CurrentReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's release of feedback, preceded by generating it from the current gradebook."""

    def copy_files(self):
        """Generate feedback, add grade-change notices, then release as nbgrader does."""
        from attnlab_grader.records.intake import feedback_exact
        from attnlab_grader.records.deadlines import deadline_html
        from attnlab_grader.records.history import insert_at_top, stamp_release
        assignment = self.coursedir.assignment_id
        students = autograded_students(self.coursedir, assignment)
        if students:
            res = feedback_exact(self, assignment, students)
            if not res["success"]:
                why = (res.get("error") or res.get("log") or "").strip().splitlines()
                self.fail(f"feedback for {assignment} could not be generated from the current grades "
                          f"({why[-1] if why else 'no reason given'}); nothing was released, so students "
                          "do not get stale scores. Fix that and release again.")
            for student in students:
                stamp_release(self.coursedir.root, self.coursedir.db_url, assignment, student)
                note = deadline_html(self.coursedir.db_url, assignment, student)
                if note:
                    insert_at_top(self.coursedir.root, assignment, student, note)
        super().copy_files()
