"""``CurrentReleaseFeedback`` (steps/release.py), nbgrader's feedback release, run on the small fixture
assignment with a real gradebook and the grader's nbgrader configuration: it regenerates the feedback from
the gradebook as it is now before copying it to the exchange (a stale page never reaches a student),
releases only the students asked for, and releases nothing when feedback cannot be generated."""
from __future__ import annotations

import copy

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import ExchangeError
from nbgrader.preprocessors import SaveAutoGrades

from attnlab_grader.records.course import load_config
from attnlab_grader.steps.release import CurrentReleaseFeedback, autograded_students
from attnlab_grader.tests.steps.conftest import ASSIGNMENT, NOTEBOOK, answered


def autograded(course, student):
    """``student``'s autograded copy (with nbgrader's timestamp and the exchange's secret) and scores."""
    course.submit(student)
    nb = answered()
    SaveAutoGrades().preprocess(copy.deepcopy(nb), course.resources(student))
    folder = course.root / "autograded" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(nb, str(folder / f"{NOTEBOOK}.ipynb"))
    (folder / "timestamp.txt").write_text("2026-11-20 14:03:00.000000 UTC")
    (folder / "submission_secret.txt").write_text(student * 8)
    stale = course.root / "feedback" / student / ASSIGNMENT
    stale.mkdir(parents=True)
    (stale / f"{NOTEBOOK}.html").write_text("<html><body>STALE old scores</body></html>")


def release(course, student=""):
    exchange = course.root / ".exchange"  # the exchange the instructor made (nbgrader's check_directory)
    exchange.mkdir(exist_ok=True)
    exchange.chmod(0o777)
    config = load_config(course.root, course.db)
    config.CourseDirectory.course_id = "attnlab"
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id, coursedir.student_id = ASSIGNMENT, student
    CurrentReleaseFeedback(coursedir=coursedir, authenticator=Authenticator(config=config), config=config).start()
    return {p.name: p.read_text() for p in (course.root / ".exchange" / "attnlab" / "feedback").glob("*.html")}


@pytest.fixture()
def two_graded(course):
    for s in ("alice", "bob"):
        autograded(course, s)
    with Gradebook(course.db) as gb:  # a person grades alice's written answer after autograding
        why = gb.find_grade("why", NOTEBOOK, ASSIGNMENT, "alice")
        why.manual_score, why.needs_manual_grade = 2.0, False
        gb.db.commit()
    return course


def test_the_released_page_is_regenerated_from_the_current_grades(two_graded):
    """The stale page in ``feedback/`` is replaced before release: the student gets the score as it is now."""
    pages = release(two_graded, "alice")
    assert len(pages) == 1
    page = next(iter(pages.values()))
    assert "STALE" not in page
    assert "Score: 3.0 / 3.0" in page and "Score: 2.0 / 2.0" in page  # the person's grade of "why" included


def test_only_the_students_asked_for_are_regenerated_and_released(two_graded):
    """Releasing alice's feedback leaves bob's folder as it was and sends nothing of his."""
    release(two_graded, "alice")
    assert "STALE" in (two_graded.root / "feedback" / "bob" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
    assert autograded_students(CourseDirectory(config=two_graded.config, student_id="bob"), ASSIGNMENT) == ["bob"]
    assert len(release(two_graded)) == 2  # everyone: both regenerated and released
    assert "STALE" not in (two_graded.root / "feedback" / "bob" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()


def test_nothing_is_released_when_feedback_cannot_be_generated(two_graded):
    """An autograded notebook that cannot be converted: the release fails, saying so, and sends nothing."""
    (two_graded.root / "autograded" / "alice" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").write_text("{ not json")
    with pytest.raises(ExchangeError, match="could not be generated from the current grades"):
        release(two_graded, "alice")
    assert not list((two_graded.root / ".exchange").rglob("*.html"))
