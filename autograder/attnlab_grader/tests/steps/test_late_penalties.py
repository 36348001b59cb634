"""The late-penalty steps (steps/late_penalties.py) on the small fixture notebook and a real gradebook:
``AttnlabLatePenalties`` copies the student's stored extension onto the submission before nbgrader's
penalty step runs; its plugin ``LatePolicy`` returns the assignment's policy's penalty; and
``ReapplyLatePenalties`` recomputes the penalty from the gradebook as it is now."""
from __future__ import annotations

import copy
import datetime as dt

import pytest
from nbgrader.api import Gradebook
from nbgrader.preprocessors import AssignLatePenalties

from attnlab_grader.records.deadlines import DAY_S, Extension, Policy, grant, set_deadline
from attnlab_grader.records.history import ensure_tables
from attnlab_grader.steps.late_penalties import AttnlabLatePenalties, LatePolicy, ReapplyLatePenalties
from attnlab_grader.tests.steps.conftest import ASSIGNMENT, NOTEBOOK, answered

DUE = dt.datetime(2026, 12, 1, 12, 0)
TEN_PER_DAY = Policy(percent_per_day=10)


def scored(course, student, auto, manual, late_by):
    """``student`` submitted ``late_by`` after the due date; their items score ``auto`` + ``manual``."""
    course.submit(student, DUE + late_by)
    with Gradebook(course.db) as gb:
        gb.find_grade("test_double", NOTEBOOK, ASSIGNMENT, student).auto_score = auto
        gb.find_grade("why", NOTEBOOK, ASSIGNMENT, student).manual_score = manual
        gb.db.commit()


def penalty(course, student):
    with Gradebook(course.db) as gb:
        sub = gb.find_submission(ASSIGNMENT, student)
        return sub.extension, sub.notebooks[0].late_submission_penalty


def run(step_class, course, student):
    course.config.AssignLatePenalties.plugin_class = LatePolicy  # as steps/nbgrader_config.py sets it
    nb = answered()
    out, _ = step_class(config=course.config).preprocess(copy.deepcopy(nb), course.resources(student))
    assert out == nb  # the steps write the gradebook, never the notebook


def test_the_extension_is_copied_before_nbgraders_penalty(course):
    """An extension granted before the student submitted (no submission row to hold it then) counts:
    3 points, 2 days 1 hour late, 1 day extension -> 2 started days at 10% = 0.6 points, where
    nbgrader's own step, without the extension, takes 3 days' worth (0.9)."""
    set_deadline(course.db, ASSIGNMENT, DUE, TEN_PER_DAY)
    grant(course.db, [Extension(ASSIGNMENT, "alice", 24 * 60, "ill")])
    scored(course, "alice", 1.0, 2.0, dt.timedelta(days=2, hours=1))
    run(AssignLatePenalties, course, "alice")
    assert penalty(course, "alice") == (None, pytest.approx(0.9))
    run(AttnlabLatePenalties, course, "alice")
    assert penalty(course, "alice") == (dt.timedelta(days=1), pytest.approx(0.6))


def test_no_extension_and_on_time_submissions(course):
    """Without an extension the penalty counts from the due date; on time there is none."""
    set_deadline(course.db, ASSIGNMENT, DUE, TEN_PER_DAY)
    scored(course, "alice", 1.0, 2.0, dt.timedelta(days=2, hours=1))
    scored(course, "bob", 1.0, 2.0, -dt.timedelta(minutes=5))
    run(AttnlabLatePenalties, course, "alice")
    run(AttnlabLatePenalties, course, "bob")
    assert penalty(course, "alice") == (None, pytest.approx(0.9))
    assert penalty(course, "bob") == (None, None)


@pytest.mark.parametrize("policy,days_late,expected", [
    (None, 3.0, None),                                            # no policy set: nbgrader's default, none
    (TEN_PER_DAY, 0.0, None),                                     # on time
    (TEN_PER_DAY, 1.5, 2.0),                                      # every started day counts: 2 x 10% of 10
    (Policy(percent_per_day=10, max_percent=30), 8.0, 3.0),       # capped
    (Policy(percent_per_day=10, hard_days=3), 4.0, 10.0),         # zero after the hard deadline
])
def test_the_plugin_returns_the_assignments_policy_penalty(course, policy, days_late, expected):
    """``LatePolicy.late_submission_penalty`` is the stored policy's penalty (None for none), as nbgrader's
    ``AssignLatePenalties`` asks its plugin: its parent holds the gradebook and the assignment."""
    if policy is not None:
        set_deadline(course.db, ASSIGNMENT, DUE, policy)
    parent = AttnlabLatePenalties(config=course.config)
    parent.assignment_id = ASSIGNMENT
    with Gradebook(course.db) as gb:
        ensure_tables(gb.db.connection())  # made by the extension copy that runs before the plugin
        parent.gradebook = gb
        got = LatePolicy(parent=parent).late_submission_penalty("alice", 10.0, days_late * DAY_S)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_feedback_recomputes_the_penalty_from_the_gradebook_as_it_is_now(course):
    """After a person lowers a late student's score, ``ReapplyLatePenalties`` (first step of feedback)
    recomputes that student's penalty from the new score; other students are left as they are."""
    set_deadline(course.db, ASSIGNMENT, DUE, TEN_PER_DAY)
    for s in ("alice", "bob"):
        scored(course, s, 1.0, 2.0, dt.timedelta(days=1, hours=1))
        run(AttnlabLatePenalties, course, s)
        assert penalty(course, s)[1] == pytest.approx(0.6)
    with Gradebook(course.db) as gb:
        for s in ("alice", "bob"):
            gb.find_grade("why", NOTEBOOK, ASSIGNMENT, s).manual_score = 0.0
        gb.db.commit()
    run(ReapplyLatePenalties, course, "alice")
    assert penalty(course, "alice")[1] == pytest.approx(0.2)   # 2 days x 10% of the 1 point left
    assert penalty(course, "bob")[1] == pytest.approx(0.6)     # not this student's feedback: untouched


def test_feedback_sees_an_extension_granted_after_grading(course):
    """An extension stored after the penalty was taken: the recomputed penalty counts from the new due date."""
    set_deadline(course.db, ASSIGNMENT, DUE, TEN_PER_DAY)
    scored(course, "alice", 1.0, 2.0, dt.timedelta(hours=20))
    run(AttnlabLatePenalties, course, "alice")
    assert penalty(course, "alice") == (None, pytest.approx(0.3))
    from attnlab_grader.records.deadlines import ExtensionRow
    from attnlab_grader.records.history import now
    with Gradebook(course.db) as gb:  # stored directly, without grant's own re-application
        gb.db.add(ExtensionRow(assignment=ASSIGNMENT, student="alice", minutes=24 * 60, reason="",
                               set_by="ta", set_at=now()))
        gb.db.commit()
    run(ReapplyLatePenalties, course, "alice")
    assert penalty(course, "alice") == (dt.timedelta(days=1), None)
