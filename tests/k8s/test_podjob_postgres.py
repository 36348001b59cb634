"""Completions of one grading Job writing into one PostgreSQL gradebook at the same time lose nothing.

Two completions (``podjob.grade_index``, the Job command's grading step, with the ``landlock``
sandbox) run as two processes at once against a throwaway PostgreSQL server, as the Job's pods
do; every score must be in the gradebook and in the exported CSV.  The pod checks themselves are
tested in test_podjob.py (this server listens on the host, which a pod-like network namespace
cannot reach).
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from attnlab_grader.sandbox import landlock_abi
from attnlab_grader.tests.test_postgres import cluster, postgres  # noqa: F401 - the server fixtures

A = "02_scaled_dot_product_attention"
STUDENTS = {"ada": ("honest", "einsum_scores", 9.0), "bo": ("wrong", "scores_no_scale", 5.0)}

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading-2"),
              pytest.mark.skipif(landlock_abi() < 4, reason=f"Landlock ABI {landlock_abi()} < 4 on this kernel")]


def test_parallel_completions_all_land_in_one_postgres_gradebook(postgres):  # noqa: F811
    from attnlab_grader.classroom import podjob
    from attnlab_grader.tests import qa
    base = Path(tempfile.mkdtemp(prefix="attnlab-k8s-pg-"))
    try:
        root = base / "course"
        for student, (kind, case, _) in STUDENTS.items():
            make = qa.honest_submission if kind == "honest" else qa.wrong_submission
            qa.write(root, student, A, make(A, student, case))
        assert podjob.prepare(root, A, postgres) == sorted(STUDENTS)
        # what the completions would race to create (tables, student rows) exists before they start
        import sqlalchemy as sa
        engine = sa.create_engine(postgres)
        try:
            tables = set(sa.inspect(engine).get_table_names())
            with engine.connect() as conn:
                known = {r[0] for r in conn.execute(sa.text("select id from student"))}
        finally:
            engine.dispose()
        assert {"attnlab_grade_change", "attnlab_feedback_release"} <= tables, tables
        assert known >= set(STUDENTS), known
        code = ("import sys; from attnlab_grader.classroom import podjob\n"
                "r = podjob.grade_index(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], 10)\n"
                "print(r['student'], r['status'], r.get('score'), '|', r.get('reason'))")
        procs = [subprocess.Popen([sys.executable, "-c", code, str(root), A, str(i), postgres],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, "OMP_NUM_THREADS": "1"})
                 for i in range(len(STUDENTS))]
        outs = [p.communicate(timeout=300) for p in procs]
        for p, (out, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, out + err[-2000:]
        lines = [o.strip().splitlines()[-1] for o, _ in outs]  # "student status score | reason"
        graded = dict(line.split(" | ", 1)[0].split(" ", 1) for line in lines)
        assert graded == {s: f"graded {want}" for s, (_, _, want) in STUDENTS.items()}, lines
        assert not (root / "gradebook.db").exists(), "the grades went to SQLite, not PostgreSQL"
        csv_path = base / "grades.csv"
        podjob_finish = [sys.executable, "-m", "attnlab_grader.classroom.podjob", "finish", str(root), "-a", A,
                         "--db", postgres, "--csv", str(csv_path)]
        res = subprocess.run(podjob_finish, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        rows = {r["student_id"]: float(r["score"]) for r in csv.DictReader(csv_path.open())}
        assert rows == {s: want for s, (_, _, want) in STUDENTS.items()}
    finally:
        shutil.rmtree(base, ignore_errors=True)
