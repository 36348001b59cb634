"""nbgrader configuration for attnlab (loaded by ``python -m attnlab_grader`` and, through the
thin ``nbgrader_config.py`` at the repository root, by formgrader/the nbgrader CLI).

The order of the steps is declared here (ANCHORS G13): nbgrader's own sanitize and
autograde steps, with ``VerifySubmission`` first and ``SandboxGrade`` in place of
``Execute``; feedback additionally strips hidden tests::

    sanitize:  VerifySubmission, ClearOutput, DeduplicateIds, OverwriteKernelspec,
               QuietOverwriteCells, CheckCellMetadataOnce (nbgrader's, plus the first;
               QuietOverwriteCells is nbgrader's OverwriteCells without its "checksum has
               changed" warning for a test cell received as released, hidden tests cleared:
               autograder/attnlab_grader/steps/overwrite_cells.py)
    autograde: SandboxGrade, LimitOutput, KeepManualGrades, AttnlabLatePenalties,
               CheckCellMetadataOnce, AutogradeOutcome    (SandboxGrade replaces Execute;
               KeepManualGrades is nbgrader's SaveAutoGrades keeping the manual grades of unchanged
               answers: autograder/attnlab_grader/steps/answers.py;
               AutogradeOutcome fails a run that could not grade: autograder/attnlab_grader/steps/outcome.py;
               CheckCellMetadataOnce is nbgrader's CheckCellMetadata with its schema compiled once:
               autograder/attnlab_grader/steps/metadata_check.py)

One step per module: ``autograder/attnlab_grader/steps/verify.py``, ``autograder/attnlab_grader/steps/sandbox_grade.py``; every setting is
a traitlet (``c.SandboxGrade.timeout``, ``.mem_mb``, ``.slot``, ``.hidden_paths``,
``.mechanism``; ``c.SubmissionIntake.*``), none is read from environment variables.
"""
from nbgrader.preprocessors import (ClearHiddenTests, ClearOutput, DeduplicateIds, GetGrades, LimitOutput,
                                    OverwriteKernelspec)

from attnlab_grader.judging.course_files import CODE_STUB, TEXT_STUB
from attnlab_grader.steps.export import AttnlabCsvExport
from attnlab_grader.records import history
from attnlab_grader.steps.answers import KeepManualGrades
from attnlab_grader.steps.late_penalties import AttnlabLatePenalties, LatePolicy, ReapplyLatePenalties
from attnlab_grader.steps.outcome import AutogradeOutcome
from attnlab_grader.steps.release import CurrentReleaseFeedback
from attnlab_grader.steps.metadata_check import CheckCellMetadataOnce
from attnlab_grader.steps.overwrite_cells import QuietOverwriteCells
from attnlab_grader.steps.sandbox_grade import SandboxGrade
from attnlab_grader.steps.verify import VerifySubmission

c = get_config()  # noqa: F821 - provided by traitlets when this file is loaded

c.CourseDirectory.course_id = "attnlab"
# Files next to a source notebook that must never reach students (grading spec, caches, the
# notebook's text source NN_x.pct.py: scripts/build_solutions.py).
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback",
                            "grading.py", "grading_*.py", "wrong", "honest",  # + the QA cases (tests only)
                            "*.pct.py"]
c.ClearSolutions.code_stub = {"python": CODE_STUB}  # the stubs' home: judging/course_files.py (attnlab check reads them)
c.ClearSolutions.text_stub = TEXT_STUB

c.Autograde.sanitize_preprocessors = [VerifySubmission, ClearOutput, DeduplicateIds,
                                      OverwriteKernelspec, QuietOverwriteCells, CheckCellMetadataOnce]
c.Autograde.autograde_preprocessors = [SandboxGrade, LimitOutput, KeepManualGrades,
                                       AttnlabLatePenalties, CheckCellMetadataOnce, AutogradeOutcome]
# Deadlines (autograder/attnlab_grader/records/deadlines.py): nbgrader's late-penalty step and plugin, after
# copying the student's extension onto the submission; the policy is per assignment in the gradebook.
c.AssignLatePenalties.plugin_class = LatePolicy
# "Release feedback" first regenerates feedback from the current grades (never stale scores) and
# adds a notice of changed grades (autograder/attnlab_grader/steps/release.py, history.py).
c.ExchangeFactory.release_feedback = CurrentReleaseFeedback
history.install()  # every grade change (formgrader, regrade, rubric) is recorded in the gradebook
# Feedback shows the late penalty recomputed from the current score (after a regrade or manual grade).
c.GenerateFeedback.preprocessors = [ReapplyLatePenalties, GetGrades, ClearHiddenTests,
                                    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor"]
c.LimitOutput.max_lines = 200
# `nbgrader export` writes COURSE/grades.csv with status, flags and reasons (autograder/attnlab_grader/steps/export.py)
c.ExportApp.plugin_class = AttnlabCsvExport
# What the grader reads from a submission folder (autograder/attnlab_grader/records/intake.py); e.g. a smaller cap:
# c.SubmissionIntake.max_notebook_bytes = 10 * 2**20
