"""``VerifySubmission`` (steps/verify.py), the first sanitize step: called as nbgrader's ``Autograde`` calls
it, on set 02's released notebook (``attnlab_grader.tests.qa``) in a course folder in ``tmp_path``.  It
accepts an answered release and hands what it found to ``SandboxGrade``; refuses a broken structure, a
kernel of another language, and (when nbgrader reads ``submitted/`` itself) a folder the intake refuses,
writing the reason to the student's report; records edited or unlocked test cells as tampered; and
removes what nbgrader copied from the submission besides the notebook and the assignment's files."""
from __future__ import annotations

import copy
import os

import nbformat
import pytest
from traitlets.config import Config

from attnlab_grader.records.grade_report import read_report
from attnlab_grader.records.intake import STAGED_DIR
from attnlab_grader.steps.verify import _VERIFIED, SubmissionError, VerifySubmission
from attnlab_grader.tests import qa

A = "02_scaled_dot_product_attention"
S = "alice"


@pytest.fixture()
def release():
    return qa.release_notebook(A)


def verify(nb, ref):
    VerifySubmission()._verify(nb, ref, ("s", A, A))
    return _VERIFIED.pop(("s", A, A))


def test_verify_accepts_answered_release(release):
    assert verify(qa.reference_submission(A, "s"), release) == {"tampered": {}, "notes": [], "learner_ids": []}


@pytest.mark.parametrize("change,needle", [
    (lambda nb: nb.cells.pop(5), "deleted"),
    (lambda nb: nb.cells.insert(5, copy.deepcopy(nb.cells[5])), "appears 2 times"),
    (lambda nb: nb.metadata.kernelspec.update(name="ir", language="R"), "not Python"),
    (lambda nb: nb.cells.append(nbformat.v4.new_code_cell("1", metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "points": 9, "grade_id": "extra", "schema_version": 3}})), "extra"),
])
def test_verify_rejects_broken_structure(release, change, needle):
    nb = copy.deepcopy(release)
    change(nb)
    with pytest.raises(SubmissionError, match=needle):
        verify(nb, release)


def test_verify_reports_edited_and_unlocked_test_cells(release):
    nb = copy.deepcopy(release)
    qa.cell(nb, "test_softmax").source += "\npass"
    qa.cell(nb, "test_sdpa").metadata["nbgrader"]["locked"] = False
    tampered = verify(nb, release)["tampered"]
    assert set(tampered) == {"test_softmax", "test_sdpa"}


# --- the step as nbgrader calls it: preprocess(nb, resources) in a course folder ---------------------------

def course_config(root, staged=True):
    """A course at ``root`` holding set 02's release; ``staged``: nbgrader reads the pipeline's checked
    copies (``.intake``), else ``submitted/`` itself (formgrader's Autograde button)."""
    (root / "release" / A).mkdir(parents=True)
    nbformat.write(qa.release_notebook(A), str(root / "release" / A / f"{A}.ipynb"))
    c = Config()
    c.CourseDirectory.root = str(root)
    if staged:
        c.CourseDirectory.submitted_directory = STAGED_DIR
    return c


def preprocess(config, nb):
    resources = {"nbgrader": {"student": S, "assignment": A, "notebook": A, "db_url": ""}}
    out, res = VerifySubmission(config=config).preprocess(nb, resources)
    assert res == resources
    return out


def test_an_answered_submission_is_handed_to_the_grading_step(tmp_path):
    """Accepted: the notebook passes unchanged and its findings wait for ``SandboxGrade`` under
    (student, assignment, notebook); a Python kernel other than the course's passes with a note."""
    config = course_config(tmp_path)
    nb = qa.reference_submission(A, S)
    nb.metadata.kernelspec.update(name="myenv", display_name="Python (myenv)", language="python")
    try:
        assert preprocess(config, copy.deepcopy(nb)) == nb
        found = _VERIFIED[(S, A, A)]
    finally:
        _VERIFIED.pop((S, A, A), None)
    assert found["tampered"] == {} and found["learner_ids"] == []
    assert len(found["notes"]) == 1 and "'myenv' (language Python) was ignored" in found["notes"][0]
    assert read_report(str(tmp_path), A, S) is None  # only a refusal writes the report here


@pytest.mark.parametrize("change,needle", [
    (lambda nb: nb.cells.pop(5), "deleted"),
    (lambda nb: nb.metadata.kernelspec.update(name="ir", language="R"), "not Python"),
])
def test_a_refused_submission_gets_an_error_report(tmp_path, change, needle):
    """A per-submission error is raised (nbgrader grades nothing) and written to the student's report;
    nothing is handed to the grading step."""
    config = course_config(tmp_path)
    nb = qa.reference_submission(A, S)
    change(nb)
    with pytest.raises(SubmissionError, match=needle):
        preprocess(config, nb)
    rep = read_report(str(tmp_path), A, S)
    assert rep["status"] == "error" and needle in rep["reason"]
    assert (S, A, A) not in _VERIFIED


def test_formgraders_autograde_reads_submitted_through_the_intake(tmp_path):
    """When nbgrader reads ``submitted/`` itself, a folder the intake refuses (here a symbolic link in it)
    is refused with the intake's reason, in the report too."""
    config = course_config(tmp_path, staged=False)
    folder = qa.write(tmp_path, S, A, qa.reference_submission(A, S)).parent
    os.symlink(tmp_path / "release", folder / "up")
    with pytest.raises(SubmissionError, match="symbolic link"):
        preprocess(config, qa.reference_submission(A, S))
    assert "symbolic link" in read_report(str(tmp_path), A, S)["reason"]
    os.unlink(folder / "up")  # the same folder without the link is accepted
    preprocess(config, qa.reference_submission(A, S))
    assert _VERIFIED.pop((S, A, A))["tampered"] == {}


def test_files_copied_from_the_submission_are_removed(tmp_path):
    """In ``autograded/<student>/<assignment>`` only notebooks, ``timestamp.txt``, the exchange's secret and
    the assignment's own files stay; anything else the student put there, links included, is removed."""
    config = course_config(tmp_path)
    (tmp_path / "source" / A).mkdir(parents=True)
    (tmp_path / "source" / A / "data.csv").write_text("x\n1\n")
    dest = tmp_path / "autograded" / S / A
    (dest / "extra").mkdir(parents=True)
    nbformat.write(qa.reference_submission(A, S), str(dest / f"{A}.ipynb"))
    for name, text in (("timestamp.txt", "2026-11-20 14:03:00 UTC"), ("submission_secret.txt", "ab" * 32),
                       ("data.csv", "x\n1\n"), ("notes.py", "print('mine')"), ("extra/more.txt", "x")):
        (dest / name).write_text(text)
    os.symlink(tmp_path / "release", dest / "link")
    preprocess(config, qa.reference_submission(A, S))
    _VERIFIED.pop((S, A, A))
    assert sorted(p.name for p in dest.iterdir()) == sorted([f"{A}.ipynb", "data.csv", "submission_secret.txt",
                                                             "timestamp.txt"])
