"""The late-penalty steps: nbgrader's ``AssignLatePenalties`` with attnlab's policy and extensions.

* :class:`AttnlabLatePenalties` (autograde): copies the student's stored extension onto the submission, then runs
  nbgrader's own penalty step;
* :class:`LatePolicy` (its ``LateSubmissionPlugin``): the penalty of the assignment's
  :class:`attnlab_grader.records.deadlines.Policy`;
* :class:`ReapplyLatePenalties` (first step of ``GenerateFeedback``): recomputes the penalty from the gradebook as it
  is now, so feedback never shows one computed from an earlier score.

The due dates, policies and extensions themselves, and the arithmetic, live in :mod:`attnlab_grader.records.deadlines`.
"""
from __future__ import annotations

from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import AssignLatePenalties, NbGraderPreprocessor

from attnlab_grader.records.deadlines import policy_for, reapply_in, sync_extension


class ReapplyLatePenalties(NbGraderPreprocessor):
    """First step of ``GenerateFeedback``: recompute the student's late penalty from the gradebook
    as it is now (:func:`reapply_in`), so feedback never shows a penalty computed from an earlier
    score."""

    def preprocess(self, nb, resources):
        """Recompute and commit the penalty of ``resources['nbgrader']``'s submission; ``nb`` unchanged."""
        info = resources["nbgrader"]
        from nbgrader.api import Gradebook
        with Gradebook(info["db_url"]) as gb:
            reapply_in(gb, info["assignment"], [info["student"]])
            gb.db.commit()
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        """Cells are left as they are."""
        return cell, resources


class LatePolicy(LateSubmissionPlugin):
    """nbgrader late-submission plugin applying the assignment's :class:`Policy` (configured as
    ``c.AssignLatePenalties.plugin_class``)."""

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        """Points to deduct from ``score`` (None: none), per the policy of the assignment being graded."""
        parent = self.parent
        return policy_for(parent.gradebook.db, parent.assignment_id).penalty(score, total_seconds_late) or None


class AttnlabLatePenalties(AssignLatePenalties):
    """nbgrader's ``AssignLatePenalties`` after copying the student's stored extension onto the
    submission (so ``total_seconds_late`` counts from due date + extension)."""

    def preprocess(self, nb, resources):
        """Sync the extension onto the submission, then nbgrader's penalty step."""
        info = resources["nbgrader"]
        from nbgrader.api import Gradebook
        with Gradebook(info["db_url"]) as gb:
            sync_extension(gb, info["assignment"], info["student"])
            gb.db.commit()
        return super().preprocess(nb, resources)
