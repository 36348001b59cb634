"""Autograde says it failed when it could not grade.

When the sandbox cannot run (e.g. formgrader's server session has no user namespaces),
:class:`attnlab_grader.steps.sandbox_grade.SandboxGrade` keeps a student's earlier result so that the
gradebook's scores do not drop to 0, and records why in the report (``kept_previous``, ``{"why": words}``).  Without
this step nbgrader would then report ``success: true`` to formgrader's Autograde button although
nothing was graded.  :class:`AutogradeOutcome`, the last autograde preprocessor, raises in that
case: nbgrader reports the failure with the reason, the gradebook keeps the earlier scores, and
the submission shows as not autograded until it is graded again.

``python -m attnlab_grader grade`` reports a kept result itself (``KEPT`` lines in its summary and the
grades sheet's ``reason``) and turns this off (``c.AutogradeOutcome.fail_when_kept = False`` in
:func:`attnlab_grader.records.course.load_config`).
"""
from __future__ import annotations

from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool

from attnlab_grader.records.grade_report import read_report
from attnlab_grader.records.reasons import kept_previous


class NotGraded(Exception):
    """The submission was not graded this time (an earlier result was kept)."""


class AutogradeOutcome(NbGraderPreprocessor):
    """Fail the autograde of a submission whose report says its earlier result was kept."""

    fail_when_kept = Bool(True, help="Raise (nbgrader reports a failure) when the grader could not "
                          "run and kept the earlier result.").tag(config=True)

    def preprocess(self, nb, resources):
        """Pass ``nb`` through unchanged when this run graded the submission.

        Raises:
            NotGraded: (reason in words) when this run kept an earlier result, e.g. the sandbox
                was unavailable, so the earlier grade must not be exported as new.
        """
        if not self.fail_when_kept:
            return nb, resources
        info = resources["nbgrader"]
        root = CourseDirectory(config=self.config).root
        rep = read_report(root, info["assignment"], info["student"])
        if rep and rep.get("kept_previous"):
            raise NotGraded(f"{info['student']}: {kept_previous(rep['kept_previous'])}; "
                            "grade again once the sandbox works (python -m attnlab_grader grade)")
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        """Cells are left as they are."""
        return cell, resources
