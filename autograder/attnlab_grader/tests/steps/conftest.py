"""Fixtures of the step tests: the small fixture notebook ``files/small.ipynb`` and a throwaway course.

``files/small.ipynb`` is an nbgrader notebook as released (solution stubbed): an answer cell
``double``, its test cell ``test_double`` (1 point, autograded) and a written answer ``why`` (2 points,
graded by a person).  :func:`course` makes a course folder in ``tmp_path`` whose real SQLite gradebook
holds that notebook's source cells, saved as ``generate_assignment`` saves them.
"""
from __future__ import annotations

import copy
import datetime as dt
import warnings
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from attnlab_grader.records.course import _quiet_imports

# A new gradebook reads its schema revision in-process, as the grader's does (nbgrader's own lookup runs
# the `alembic` script, found on PATH only in an activated environment).
_quiet_imports()

FILES = Path(__file__).resolve().parent / "files"
ASSIGNMENT = "ps1"
NOTEBOOK = "small"
STUDENTS = ("alice", "bob")


def small_release():
    """``files/small.ipynb`` with nbgrader's checksums, as ``generate_assignment`` releases it."""
    from nbgrader.preprocessors import ComputeChecksums
    nb = nbformat.read(str(FILES / "small.ipynb"), as_version=4)
    nb, _ = ComputeChecksums().preprocess(nb, {})
    return nb


def answered(code: str = "def double(x):\n    return 2 * x", why: str = "Doubling adds x to itself."):
    """A student's copy of the small notebook with ``code`` in ``double`` and ``why`` written."""
    nb = small_release()
    cell(nb, "double").source = code
    cell(nb, "why").source = why
    return nb


def cell(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


@dataclass
class Course:
    """A throwaway course: ``root`` folder, ``db`` (SQLite URL of its gradebook), nbgrader ``config``."""
    root: Path
    db: str
    config: object

    def resources(self, student: str) -> dict:
        """What nbgrader's ``Autograde`` passes to each step for ``student``'s notebook."""
        return {"nbgrader": {"db_url": self.db, "assignment": ASSIGNMENT, "notebook": NOTEBOOK,
                             "student": student}}

    def gradebook(self):
        from nbgrader.api import Gradebook
        return Gradebook(self.db)

    def submit(self, student: str, when: dt.datetime | None = None) -> None:
        """Record ``student``'s submission (nbgrader makes its grade rows), submitted at ``when``."""
        with self.gradebook() as gb, warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*not in session.*")  # SQLAlchemy 2 on nbgrader, harmless
            gb.update_or_create_submission(ASSIGNMENT, student, timestamp=when)


@pytest.fixture()
def course(tmp_path) -> Course:
    """A course in ``tmp_path`` with a real gradebook holding assignment ``ps1``'s source cells
    (``small``) and the students ``alice`` and ``bob``."""
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import SaveCells
    from traitlets.config import Config
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(db) as gb:
        gb.update_or_create_assignment(ASSIGNMENT)
        for s in STUDENTS:
            gb.update_or_create_student(s)
    SaveCells().preprocess(small_release(), {"nbgrader": {"db_url": db, "assignment": ASSIGNMENT,
                                                          "notebook": NOTEBOOK}})
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    config.CourseDirectory.db_url = db
    config.CourseDirectory.course_id = "attnlab"
    return Course(tmp_path, db, copy.deepcopy(config))
