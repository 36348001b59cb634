"""``KeepManualGrades`` (steps/answers.py), called as nbgrader's ``Autograde`` calls it, on the small
fixture notebook and a real gradebook: a re-grade keeps a person's grade while the answer's checksum is
unchanged, and sends a changed answer back to manual grading, named in the student's report."""
from __future__ import annotations

import copy

from nbgrader.api import Gradebook

from attnlab_grader.records.grade_report import read_report, write_report
from attnlab_grader.steps.answers import AnswerChecksum, KeepManualGrades, answer_checksums
from attnlab_grader.tests.steps.conftest import ASSIGNMENT, NOTEBOOK, answered, cell

S = "alice"


def grade(course, nb):
    """One autograde of ``nb`` for alice by the step; returns the notebook it passes on."""
    out, _ = KeepManualGrades(config=course.config).preprocess(copy.deepcopy(nb), course.resources(S))
    return out


def item(course, gid):
    with Gradebook(course.db) as gb:
        g = gb.find_grade(gid, NOTEBOOK, ASSIGNMENT, S)
        return g.needs_manual_grade, g.manual_score, g.auto_score


def grade_by_hand(course, gid, points):
    with Gradebook(course.db) as gb:
        g = gb.find_grade(gid, NOTEBOOK, ASSIGNMENT, S)
        g.manual_score, g.needs_manual_grade = points, False
        gb.db.commit()


def graded_report(course):
    write_report(str(course.root), ASSIGNMENT, S, {"student": S, "assignment": ASSIGNMENT, "status": "graded",
                                                   "items": {}, "flags": []})


def test_first_grade_scores_as_nbgrader_and_stores_each_answers_checksum(course):
    """The first autograde records nbgrader's scores (the test cell autograded, the written answer waiting
    for a person) and one checksum per graded item: the answer's own for the written cell, that of every
    solution cell together for the test cell."""
    course.submit(S)
    nb = answered()
    grade(course, nb)
    assert item(course, "test_double") == (False, None, 1.0)
    assert item(course, "why") == (True, None, None)
    with Gradebook(course.db) as gb:
        stored = {r.item: r.checksum for r in gb.db.query(AnswerChecksum).filter_by(student=S)}
    assert stored == answer_checksums(nb)


def test_answer_checksums_follow_the_answer_behind_each_item():
    """The written item's checksum changes only with its own text; the test cell's with any solution cell."""
    base = answer_checksums(answered())
    code = answer_checksums(answered(code="def double(x):\n    return x + x"))
    text = answer_checksums(answered(why="Another explanation."))
    assert code["why"] == base["why"] and code["test_double"] != base["test_double"]
    assert text["why"] != base["why"] and text["test_double"] != base["test_double"]
    assert set(base) == {"test_double", "why"}


def test_a_manual_grade_stands_while_the_answer_is_unchanged(course):
    """Re-grading the same answer keeps the person's grade (nbgrader's own step would send it back)."""
    course.submit(S)
    graded_report(course)
    nb = answered()
    grade(course, nb)
    grade_by_hand(course, "why", 2.0)
    grade(course, nb)
    assert item(course, "why") == (False, 2.0, None)
    assert "back_to_manual" not in read_report(str(course.root), ASSIGNMENT, S)


def test_a_changed_answer_goes_back_to_manual_grading_and_is_named(course):
    """A resubmission with a different written answer: the item waits for a person again, the manual
    score is kept for them to revise, and the report's ``back_to_manual`` names it; it stays named at a
    later re-grade of the same answer until a person grades it again."""
    course.submit(S)
    graded_report(course)
    grade(course, answered())
    grade_by_hand(course, "why", 2.0)
    changed = answered(why="A different explanation, resubmitted.")
    grade(course, changed)
    assert item(course, "why") == (True, 2.0, None)
    assert item(course, "test_double")[0] is False  # the autograded item did not need a person
    assert read_report(str(course.root), ASSIGNMENT, S)["back_to_manual"] == ["why"]
    graded_report(course)
    grade(course, changed)
    assert item(course, "why")[0] is True
    assert read_report(str(course.root), ASSIGNMENT, S)["back_to_manual"] == ["why"]


def test_a_pending_item_stays_pending_and_is_not_named(course):
    """A written answer nobody graded yet stays pending on a re-grade and is not reported as sent back."""
    course.submit(S)
    graded_report(course)
    nb = answered()
    grade(course, nb)
    grade(course, nb)
    assert item(course, "why") == (True, None, None)
    assert "back_to_manual" not in read_report(str(course.root), ASSIGNMENT, S)


def test_without_a_stored_checksum_the_first_regrade_is_nbgraders(course):
    """A gradebook from before the checksum table: the first re-grade sends a graded written answer back
    (nbgrader's behaviour), and stores the checksum so the next re-grade keeps the grade."""
    course.submit(S)
    nb = answered()
    grade(course, nb)
    with Gradebook(course.db) as gb:
        gb.db.query(AnswerChecksum).delete()
        gb.db.commit()
    grade_by_hand(course, "why", 2.0)
    grade(course, nb)
    assert item(course, "why") == (True, 2.0, None)
    grade_by_hand(course, "why", 2.0)
    grade(course, nb)
    assert item(course, "why") == (False, 2.0, None)


def test_a_changed_code_answer_rescores_the_test_cell(course):
    """A test cell's score follows its outputs on every re-grade (an error output: no points)."""
    from nbformat.v4 import new_output
    course.submit(S)
    nb = answered()
    grade(course, nb)
    wrong = answered(code="def double(x):\n    return x")
    cell(wrong, "test_double").outputs = [new_output("error", ename="AssertionError", evalue="", traceback=[])]
    grade(course, wrong)
    assert item(course, "test_double") == (False, None, 0.0)
