"""Re-grading keeps a person's grades whose answers did not change.

nbgrader's ``SaveAutoGrades`` marks a graded cell for manual grading again on *every* autograde
when it has a manual score or no autograded score: re-grading a class (``attnlab-grade grade`` a
second time, formgrader's Autograde on one student) sent every written answer back to "needs manual
grading" for every student, ``grades.csv`` back to ``manual_pending``, and the LMS export lost its
grades.  :class:`KeepManualGrades` replaces it (``c.Autograde.autograde_preprocessors`` in
``autograder/attnlab_grader/steps/nbgrader_config.py``): it stores nbgrader's cell checksum
(:func:`nbgrader.utils.compute_checksum`) of the answer each item was graded on, in attnlab's
table ``attnlab_answer_checksum`` in the gradebook, and on a re-grade decides with
:func:`attnlab_grader.records.lifecycle.after`:

- the answer's checksum is the one stored: the item keeps its state (a manual grade stands, a
  pending one stays pending);
- it changed (the student resubmitted a different answer) and a person grades the item: the item
  waits for manual grading again, and its ``grade_id`` is added to the student's report
  (``back_to_manual``), which the grade summary, the class report and ``grades.csv`` name.

The answer of a written (manually graded) cell is the cell itself; the answer behind a test cell
is every solution cell of the notebook.  A gradebook from before this table existed has no stored
checksum: its first re-grade behaves as nbgrader does, and every later one keeps grades.
"""
from __future__ import annotations

import hashlib

from nbgrader import utils
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import SaveAutoGrades
from sqlalchemy import Column, String

from attnlab_grader.records.grade_report import read_report, write_report
from attnlab_grader.records.history import Base, ensure_tables
from attnlab_grader.records.lifecycle import Action, State, after, state_of


#: Gradebook URLs whose attnlab tables this process has made sure of.
_TABLES_MADE: set[str] = set()


class AnswerChecksum(Base):
    """The checksum of the answer an item was last graded on (table ``attnlab_answer_checksum``)."""
    __tablename__ = "attnlab_answer_checksum"
    assignment = Column(String(128), primary_key=True)
    notebook = Column(String(128), primary_key=True)
    student = Column(String(128), primary_key=True)
    item = Column(String(128), primary_key=True)   #: the graded cell's grade_id
    checksum = Column(String(64), nullable=False)  #: nbgrader's compute_checksum of the answer


def answer_checksums(nb) -> dict[str, str]:
    """``{grade_id: checksum}`` of the answer behind each graded cell of ``nb`` (nbformat v4
    notebook with nbgrader metadata): a solution cell's own checksum, else the checksum of every
    solution cell of the notebook together (what the tests ran)."""
    code = hashlib.md5(usedforsecurity=False)
    for cell in nb.cells:
        if utils.is_solution(cell):
            code.update(utils.compute_checksum(cell).encode())
    together = code.hexdigest()
    return {cell.metadata["nbgrader"]["grade_id"]: (utils.compute_checksum(cell) if utils.is_solution(cell)
                                                   else together)
            for cell in nb.cells if utils.is_grade(cell)}


class KeepManualGrades(SaveAutoGrades):
    """nbgrader's ``SaveAutoGrades``, except that a re-grade keeps the manual grading state of every
    item whose answer did not change (see the module docstring)."""

    def preprocess(self, nb, resources):
        """Record the autograded scores of ``nb`` as nbgrader does, then the answers' checksums;
        name the items waiting for manual grading again because their answer changed (now or at an
        earlier re-grade) in the student's report (``back_to_manual``)."""
        from nbgrader.api import Gradebook
        self._answers = answer_checksums(nb)
        nb, resources = super().preprocess(nb, resources)
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:  # changed now, or earlier and still not graded again
            back = changed_since_manual(gb.find_submission(info["assignment"], info["student"]))
        if back:
            root = CourseDirectory(config=self.config).root
            rep = read_report(root, info["assignment"], info["student"])
            if rep is not None:
                rep["back_to_manual"] = back
                write_report(root, info["assignment"], info["student"], rep)
        return nb, resources

    def _add_score(self, cell, resources) -> None:
        gb = self.gradebook
        gid = cell.metadata["nbgrader"]["grade_id"]
        grade = gb.find_grade(gid, self.notebook_id, self.assignment_id, self.student_id)
        before = state_of(grade)
        if self.db_url not in _TABLES_MADE:  # once per process and gradebook, not per cell
            ensure_tables(gb.db.connection())
            _TABLES_MADE.add(self.db_url)
        key = (self.assignment_id, self.notebook_id, self.student_id, gid)
        stored = gb.db.get(AnswerChecksum, key)
        now = self._answers[gid]
        super()._add_score(cell, resources)  # nbgrader's scores (and its blunt needs_manual_grade)
        if stored is not None:
            person = grade.manual_score is not None or grade.auto_score is None
            action = Action.REGRADE_SAME if stored.checksum == now else Action.REGRADE_CHANGED
            state = after(before, action, graded_by_person=person)
            grade.needs_manual_grade = state is State.AWAITING_MANUAL
            stored.checksum = now
        else:
            gb.db.add(AnswerChecksum(assignment=key[0], notebook=key[1], student=key[2], item=key[3],
                                     checksum=now))
        gb.db.commit()


def changed_since_manual(submission) -> list[str]:
    """``grade_id`` of every item of nbgrader's ``submission`` (a ``SubmittedAssignment``) that a
    person graded and that waits for manual grading again because its answer changed, sorted."""
    return sorted(g.name for nb in submission.notebooks for g in nb.grades
                  if g.needs_manual_grade and g.manual_score is not None)
