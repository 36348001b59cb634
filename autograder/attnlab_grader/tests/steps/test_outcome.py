"""``AutogradeOutcome`` (steps/outcome.py), called on the small fixture notebook with nbgrader's resources:
it fails the autograde of a submission whose report says re-grading failed and the earlier result was
kept, and passes every other notebook through unchanged."""
from __future__ import annotations

import copy

import pytest

from attnlab_grader.records.grade_report import write_report
from attnlab_grader.steps.outcome import AutogradeOutcome, NotGraded
from attnlab_grader.tests.steps.conftest import ASSIGNMENT, answered

S = "alice"


def report(course, **extra):
    write_report(str(course.root), ASSIGNMENT, S, {"student": S, "assignment": ASSIGNMENT, "status": "graded",
                                                   "items": {}, "flags": [], **extra})


def test_a_kept_earlier_result_fails_the_autograde_with_the_reason(course):
    """Re-grading could not run and the earlier result was kept: ``NotGraded`` names the student and why."""
    report(course, kept_previous={"why": "no user namespaces here"})
    with pytest.raises(NotGraded, match=r"alice: not re-graded: the grader could not run "
                                        r"\(no user namespaces here\).*grade again"):
        AutogradeOutcome(config=course.config).preprocess(answered(), course.resources(S))


@pytest.mark.parametrize("written", ["graded", "none"])
def test_a_graded_or_unreported_submission_passes_unchanged(course, written):
    """A report without ``kept_previous`` (or no report at all) passes the notebook through as it came."""
    if written == "graded":
        report(course)
    nb = answered()
    out, res = AutogradeOutcome(config=course.config).preprocess(copy.deepcopy(nb), course.resources(S))
    assert out == nb and res == course.resources(S)


def test_the_pipeline_setting_turns_the_failure_off(course):
    """``fail_when_kept = False`` (what ``python -m attnlab_grader grade`` sets: it reports KEPT itself)."""
    report(course, kept_previous={"why": "sandbox crashed"})
    course.config.AutogradeOutcome.fail_when_kept = False
    nb = answered()
    out, _ = AutogradeOutcome(config=course.config).preprocess(copy.deepcopy(nb), course.resources(S))
    assert out == nb
