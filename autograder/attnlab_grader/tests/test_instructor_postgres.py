"""Two graders grading different assignments of one course into one PostgreSQL gradebook at the
same time lose nothing: two real ``python -m attnlab_grader grade`` processes, started together on
a fresh (empty) database, each grading its own assignment for the same students; afterwards
every grade of both is in PostgreSQL and both assignments' rows are in ``grades.csv``.
Uses the throwaway cluster of ``test_postgres.py`` (skips and says why without the server)."""
from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab_grader.records.course import normalize_db_url
from attnlab_grader.tests import qa

from attnlab_grader.tests.conftest import needs_sandbox
from attnlab_grader.tests.test_postgres import cluster, postgres  # noqa: F401 - the fixtures (postgres needs cluster)

SETS = ("01_routing_and_soft_lookup", "02_scaled_dot_product_attention")
STUDENTS = ("ana", "ben")
REPO = Path(__file__).resolve().parents[3]


@needs_sandbox
@pytest.mark.slow
@pytest.mark.xdist_group("grading-2")
def test_two_graders_at_once_into_postgresql_lose_nothing(postgres, tmp_path):  # noqa: F811
    from nbgrader.api import Gradebook
    root = tmp_path / "course"
    for a in SETS:
        for s in STUDENTS:
            qa.write(root, s, a, qa.reference_submission(a, s))
    procs = [subprocess.Popen([sys.executable, "-m", "attnlab_grader", "grade", str(root), "-a", a, "--jobs", "1",
                               "--db", postgres, "--no-feedback"], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for a in SETS]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, out + err
        assert f"graded {len(STUDENTS)}, failed 0" in out, out + err
    with Gradebook(normalize_db_url(postgres), "attnlab") as gb:
        assert sorted(s.id for s in gb.students) == sorted(STUDENTS)
        for a in SETS:
            for s in STUDENTS:
                sub = gb.find_submission(a, s)
                assert sub.code_score == pytest.approx(sub.max_code_score) and sub.max_code_score > 0, (a, s)
    with open(root / "grades.csv", newline="") as fh:
        rows = {(r["assignment"], r["student_id"]) for r in csv.DictReader(fh)}
    assert rows == {(a, s) for a in SETS for s in STUDENTS}, "a grader's export dropped the other's rows"
