"""``AttnlabCsvExport`` (steps/export.py), nbgrader's export plugin, called with a real gradebook of the
small fixture assignment: it writes ``grades.csv`` with the documented columns and one row per
(assignment, student) saying status (graded, manual_pending, flagged, error), failed items, reasons in
words, due date, extension, lateness and the late penalty recomputed from the gradebook."""
from __future__ import annotations

import csv
import datetime as dt

import pytest
from nbgrader.api import Gradebook

from attnlab_grader.judging.verdict import Verdict
from attnlab_grader.records.deadlines import Extension, Policy, grant, set_deadline
from attnlab_grader.records.grade_report import error_report, write_report
from attnlab_grader.steps.export import FIELDS, AttnlabCsvExport
from attnlab_grader.tests.steps.conftest import ASSIGNMENT, NOTEBOOK

DUE = dt.datetime(2026, 12, 1, 12, 0)


def scored(course, student, auto, manual, needs_manual=False, late_by=dt.timedelta(0), flagged=False):
    course.submit(student, DUE + late_by)
    with Gradebook(course.db) as gb:
        test = gb.find_grade("test_double", NOTEBOOK, ASSIGNMENT, student)
        test.auto_score, test.needs_manual_grade = auto, False
        why = gb.find_grade("why", NOTEBOOK, ASSIGNMENT, student)
        why.manual_score, why.needs_manual_grade = manual, needs_manual
        gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student).flagged = flagged
        gb.db.commit()


def report(course, student, status="graded", items=None, flags=()):
    write_report(str(course.root), ASSIGNMENT, student, {
        "student": student, "assignment": ASSIGNMENT, "status": status, "flags": list(flags),
        "items": items or {"test_double": Verdict(True, "right", max_points=1.0)}})


def export(course, **traits):
    with Gradebook(course.db) as gb:
        path = AttnlabCsvExport(config=course.config, course_root=str(course.root), **traits).export(gb)
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        return path, reader.fieldnames, {r["student_id"]: r for r in reader}


@pytest.fixture()
def graded_class(course):
    """alice on time; bob late with his written answer waiting; carol refused before nbgrader saw her;
    dave flagged by the grader; erin flagged by a person in formgrader."""
    with Gradebook(course.db) as gb:
        for s in ("dave", "erin"):
            gb.update_or_create_student(s)
    set_deadline(course.db, ASSIGNMENT, DUE, Policy(percent_per_day=10))
    grant(course.db, [Extension(ASSIGNMENT, "bob", 60, "")])
    scored(course, "alice", 1.0, 2.0, late_by=-dt.timedelta(hours=1))
    report(course, "alice")
    scored(course, "bob", 0.0, None, needs_manual=True, late_by=dt.timedelta(days=1, hours=2))
    report(course, "bob", items={"test_double": Verdict(False, "double(2) returned 2", mistake="identity",
                                                         max_points=1.0)})
    write_report(str(course.root), ASSIGNMENT, "carol", error_report("carol", ASSIGNMENT, "the notebook is not JSON"))
    scored(course, "dave", 1.0, 2.0, flagged=True)
    report(course, "dave", status="flagged", flags=["test_double: the same answer as erin"])
    scored(course, "erin", 1.0, 2.0, flagged=True)
    report(course, "erin")
    return course


def test_the_sheet_has_the_documented_columns_and_one_row_each(graded_class):
    """``<course>/grades.csv`` by default, the columns of the module docstring in order; a student the
    gradebook knows without a submission or report gets no row."""
    path, columns, rows = export(graded_class)
    assert path == str(graded_class.root / "grades.csv")
    assert columns == FIELDS == ["assignment", "student_id", "score", "max_score", "autograded_score", "status",
                                 "flags", "failed_items", "reason", "due", "extension", "late_by",
                                 "late_penalty", "final_score"]
    assert sorted(rows) == ["alice", "bob", "carol", "dave", "erin"]
    assert {r["assignment"] for r in rows.values()} == {ASSIGNMENT}


def test_each_status_and_its_reason(graded_class):
    """graded; manual_pending (not final, reason says so); error (empty scores, reason from the report);
    flagged by the grader (its flags) or by a person (said so)."""
    _, _, rows = export(graded_class)
    alice, bob, carol, dave, erin = (rows[s] for s in ("alice", "bob", "carol", "dave", "erin"))
    assert (alice["status"], float(alice["score"]), float(alice["max_score"]), float(alice["autograded_score"])) \
        == ("graded", 3.0, 3.0, 1.0)
    assert alice["failed_items"] == "" and alice["reason"] == ""
    assert bob["status"] == "manual_pending" and "manually graded answers not graded yet" in bob["reason"]
    assert bob["failed_items"] == "test_double: named mistake (identity)"
    assert carol["status"] == "error" and carol["score"] == carol["final_score"] == carol["autograded_score"] == ""
    assert carol["reason"] == "the notebook is not JSON"
    assert dave["status"] == "flagged" and dave["flags"] == "test_double: the same answer as erin"
    assert erin["status"] == "flagged" and erin["reason"] == "flagged in formgrader"


def test_deadline_columns_and_the_penalty_from_the_current_score(graded_class):
    """Due date with the extension, lateness and a penalty recomputed at export from the score as it is
    now; ``final_score`` = ``score`` - ``late_penalty``."""
    _, _, rows = export(graded_class)
    alice, bob = rows["alice"], rows["bob"]
    assert (alice["due"], alice["extension"], alice["late_by"], float(alice["late_penalty"])) \
        == ("2026-12-01 12:00 UTC", "", "", 0.0)
    assert (bob["extension"], bob["late_by"]) == ("1 h", "1 d 1 h")
    assert float(bob["late_penalty"]) == 0.0 and float(bob["final_score"]) == 0.0  # score 0: nothing to take
    with Gradebook(graded_class.db) as gb:  # a person grades bob's written answer after the penalty was set
        why = gb.find_grade("why", NOTEBOOK, ASSIGNMENT, "bob")
        why.manual_score, why.needs_manual_grade = 2.0, False
        gb.db.commit()
    _, _, rows = export(graded_class)
    bob = rows["bob"]
    assert bob["status"] == "graded" and float(bob["score"]) == 2.0
    assert float(bob["late_penalty"]) == pytest.approx(0.4)  # 2 started days x 10% of 2 points
    assert float(bob["final_score"]) == pytest.approx(1.6)


def test_the_export_merges_and_can_be_narrowed(graded_class):
    """Exporting one student replaces that row only; the others already in the sheet stay."""
    export(graded_class)
    report(graded_class, "alice", items={"test_double": Verdict(False, "wrong", max_points=1.0)})
    _, _, rows = export(graded_class, student=["alice"])
    assert sorted(rows) == ["alice", "bob", "carol", "dave", "erin"]
    assert rows["alice"]["failed_items"] == "test_double: wrong values (no known mistake)"


def test_text_cells_cannot_drive_a_spreadsheet(course):
    """A reason starting like a formula is neutralised by ``csv_cell``."""
    write_report(str(course.root), ASSIGNMENT, "alice", error_report("alice", ASSIGNMENT, "=HYPERLINK(\"x\")"))
    _, _, rows = export(course)
    assert not rows["alice"]["reason"].startswith("=")


def test_a_student_who_submitted_nothing_has_no_row(course):
    """Documented: a student the gradebook knows who submitted nothing (and has no report) gets no row."""
    _, _, rows = export(course)
    assert "alice" not in rows


def test_a_submission_without_a_report_still_has_its_row(course):
    """A submission nbgrader holds but attnlab wrote no report for (graded with plain ``nbgrader autograde``)
    gets its row from the gradebook: the rows come from the assignment's submissions and the reports, and only
    a student with neither is left out."""
    with Gradebook(course.db) as gb:
        for s in ("frank", "gina"):
            gb.update_or_create_student(s)
    scored(course, "gina", 1.0, 2.0)
    _, _, rows = export(course)
    assert sorted(rows) == ["gina"]
    assert rows["gina"]["status"] == "graded" and float(rows["gina"]["score"]) == 3.0
