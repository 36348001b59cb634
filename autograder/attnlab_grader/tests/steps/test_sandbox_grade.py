"""``SandboxGrade`` (steps/sandbox_grade.py), called as nbgrader's ``Autograde`` calls it, right after
``VerifySubmission``, on set 02 in a course folder in ``tmp_path`` with the real sandbox: it writes each
item's verdict into its test cell's outputs (a pass as ``✔`` text, a failure as an ``error`` output with
our message, never the hidden test) and into the student's report, and refuses a notebook
``VerifySubmission`` did not check in this process."""
from __future__ import annotations

import copy

import nbformat
import pytest
from nbgrader.utils import is_grade, is_solution
from traitlets.config import Config

from attnlab_grader.records.course import stage_source
from attnlab_grader.records.grade_report import read_report
from attnlab_grader.records.intake import STAGED_DIR
from attnlab_grader.steps import sandbox_grade
from attnlab_grader.steps.sandbox_grade import SandboxGrade
from attnlab_grader.steps.verify import SubmissionError, VerifySubmission
from attnlab_grader.tests import qa
from attnlab_grader.tests.conftest import needs_sandbox

pytestmark = [needs_sandbox, pytest.mark.slow, pytest.mark.xdist_group("grading-2")]

A = "02_scaled_dot_product_attention"
FUNCS = ("test_attention_scores", "test_softmax", "test_sdpa")


@pytest.fixture(scope="module")
def course(tmp_path_factory, one_torch_thread):
    """Set 02's source (with its grading.py) and release in a course folder; the step's sandbox is closed
    when the module ends."""
    root = tmp_path_factory.mktemp("sandbox-grade")
    stage_source(root, A)
    (root / "release" / A).mkdir(parents=True)
    nbformat.write(qa.release_notebook(A), str(root / "release" / A / f"{A}.ipynb"))
    c = Config()
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.db_url = f"sqlite:///{root / 'gradebook.db'}"
    c.CourseDirectory.submitted_directory = STAGED_DIR
    yield root, c
    if sandbox_grade._SANDBOX is not None:
        sandbox_grade._SANDBOX.close()
        sandbox_grade._SANDBOX = None


def grade(course, student, nb, verified=True):
    root, config = course
    resources = {"nbgrader": {"student": student, "assignment": A, "notebook": A, "db_url": config.CourseDirectory.db_url}}
    if verified:
        nb, resources = VerifySubmission(config=config).preprocess(nb, resources)
    out, _ = SandboxGrade(config=config).preprocess(nb, resources)
    return out, read_report(str(root), A, student)


def test_the_reference_submission_earns_every_point(course):
    """Every test cell says ``✔`` and the report is graded with the full score."""
    out, rep = grade(course, "ref", qa.reference_submission(A, "ref"))
    tests = [c for c in out.cells if is_grade(c) and not is_solution(c) and c.cell_type == "code"]
    assert tests and all(c.outputs[0].output_type == "stream" and c.outputs[0].text.startswith("✔") for c in tests)
    assert rep["status"] == "graded" and rep["score"] == rep["max_score"] > 0
    assert all(v.ok for v in rep["items"].values())


def test_a_wrong_answer_fails_its_item_only_with_our_message(course):
    """softmax returning its input: ``test_softmax`` (and the cells calling it) get an ``error`` output
    with the verdict, no assert line of the hidden tests; the others still pass."""
    nb = qa.reference_submission(A, "wrong")
    qa.cell(nb, "softmax").source = "def softmax(x, dim=-1):\n    return x\n"
    hidden = nbformat.read(str(qa.SOLUTIONS / A / f"{A}.ipynb"), as_version=4)
    out, rep = grade(course, "wrong", nb)
    failed = qa.cell(out, "test_softmax").outputs
    assert [o.output_type for o in failed] == ["error"] and failed[0].evalue == rep["items"]["test_softmax"].reason
    assert qa.cell(hidden, "test_softmax").source.splitlines()[-1] not in failed[0].evalue
    assert not rep["items"]["test_softmax"].ok and rep["items"]["test_attention_scores"].ok
    assert rep["status"] == "graded" and 0 < rep["score"] < rep["max_score"]


def test_a_notebook_verify_did_not_check_is_refused(course):
    """Fail closed: without ``VerifySubmission`` in this process nothing is graded or written."""
    nb = qa.reference_submission(A, "unchecked")
    with pytest.raises(SubmissionError, match="not checked by VerifySubmission"):
        grade(course, "unchecked", copy.deepcopy(nb), verified=False)
    assert read_report(str(course[0]), A, "unchecked") is None
