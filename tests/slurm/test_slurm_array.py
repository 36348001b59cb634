"""A class graded as a job array on a real single-host Slurm (``cluster.Cluster``), into a
PostgreSQL gradebook reached from the tasks, with deploy/slurm/grade-array.sbatch as written.

Proves: the array grades every submission (scores known in advance: honest full marks, a named
mistake loses its items); one array index cancelled with ``scancel`` while it runs leaves its
submission not graded, ``collect`` says so in its exit code, and that index rerun alone completes
the class without touching the other submissions' reports or gradebook rows; the same
submissions graded by ``shard run`` on this machine (two processes, SQLite) and by the pod Job's
grading step (``podjob.grade_index``, one completion per submission, ``landlock``) give the same
gradebook, score by score per student, notebook and item.  Every daemon is stopped and every
file removed, pass or fail.  Needs root, Debian's slurm-wlm and munge, PostgreSQL and Landlock
ABI >= 4 (the pod Job's sandbox); skips saying which is missing otherwise.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from attnlab_grader.records.course import REPO
from attnlab_grader.sandbox import landlock_abi
from attnlab_grader.tests.test_postgres import cluster, postgres  # noqa: F401 - the server fixtures

from .cluster import Cluster, why_not

A = "02_scaled_dot_product_attention"
#: student -> (kind, case, expected score of 9); one task each (N = 3)
STUDENTS = {"ada": ("honest", "einsum_scores", 9.0), "bo": ("wrong", "scores_no_scale", 5.0),
            "cy": ("reference", None, 9.0)}
SCRIPT = REPO / "deploy" / "slurm" / "grade-array.sbatch"

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading-2"),
              pytest.mark.skipif(why_not() is not None, reason=str(why_not())),
              pytest.mark.skipif(landlock_abi() < 4, reason=f"Landlock ABI {landlock_abi()} < 4 on this kernel "
                                 "(the pod Job's sandbox, compared with here)")]


def write_class(root: Path):
    from attnlab_grader.tests import qa
    for student, (kind, case, _) in STUDENTS.items():
        if kind == "reference":
            nb = qa.reference_submission(A, student)
        else:
            nb = (qa.honest_submission if kind == "honest" else qa.wrong_submission)(A, student, case)
        qa.write(root, student, A, nb)


def scores(db_url: str) -> dict[tuple[str, str, str], float]:
    """``{(student, notebook, item): score}`` of every submission of ``A`` in the gradebook."""
    from nbgrader.api import Gradebook
    out = {}
    with Gradebook(db_url) as gb:
        for sub in gb.assignment_submissions(A):
            for nb in sub.notebooks:
                for g in nb.grades:
                    out[(sub.student.id, nb.name, g.name)] = g.score
    return out


def totals(table) -> dict[str, float]:
    out: dict[str, float] = {}
    for (student, _, _), score in table.items():
        out[student] = out.get(student, 0.0) + score
    return out


def _wait_done(slurm: Cluster, job: str, timeout: float = 300):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if not slurm.run(["squeue", "-h", "-j", job, "-o", "%i"], check=False).stdout.strip():
            return
        time.sleep(1)
    raise AssertionError(f"job {job} still queued or running after {timeout:.0f} s:\n{slurm.logs()}")


def _collect(root: Path, db: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attnlab_grader.classroom.shard", "collect", str(root), "-a", A, "--db", db],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def base():
    path = Path(tempfile.mkdtemp(prefix="attnlab-slurm-test-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def slurm_gradebook(base, postgres):  # noqa: F811
    """The class graded as a Slurm array with index 1 cancelled while running and rerun:
    ``(course root, gradebook URL, notes)``."""
    from attnlab_grader.classroom import shard
    root = base / "slurm-course"
    write_class(root)
    assert [s for _, s in shard.prepare(root, [A], postgres)] == sorted(STUDENTS)
    notes = {}
    with Cluster(cpus=2) as slurm:
        env = {"ATTNLAB_COURSE": str(root), "ATTNLAB_ASSIGNMENTS": A, "ATTNLAB_DB": postgres,
               "ATTNLAB_GRADE_PYTHON": sys.executable, "ATTNLAB_GRADE_ARGS": "--item-timeout 60"}
        export = "ALL," + ",".join(f"{k}={v}" for k, v in env.items())
        sbatch = ["sbatch", "--parsable", f"--export={export}", "--mem=2G", f"--chdir={base}",
                  f"--output={base}/%A_%a.out"]
        job = slurm.run(sbatch + ["--array=0-2", str(SCRIPT)]).stdout.strip().split(";")[0]
        # cancel index 1 while it runs (its grading takes seconds: python, torch, nbgrader start first)
        t0 = time.monotonic()
        while slurm.states(job).get("1") != "RUNNING":
            assert time.monotonic() - t0 < 120, f"index 1 never ran: {slurm.states(job)}\n{slurm.logs()}"
            time.sleep(0.2)
        time.sleep(1.0)
        slurm.run(["scancel", f"{job}_1"])
        _wait_done(slurm, job)
        notes["states"] = slurm.states(job)
        notes["first_collect"] = _collect(root, postgres)
        before = {s: (root / "reports" / A / f"{s}.json").stat().st_mtime_ns for s in ("ada", "cy")}
        notes["scores_before_rerun"] = scores(postgres)
        # the rerun: index 1 alone, an array of its own that keeps N = 3
        rerun_env = {**env, "ATTNLAB_GRADE_ARGS": env["ATTNLAB_GRADE_ARGS"] + " --shards 3"}
        rerun_export = "ALL," + ",".join(f"{k}={v}" for k, v in rerun_env.items())
        rerun = slurm.run(sbatch[:2] + [f"--export={rerun_export}"] + sbatch[3:]
                            + ["--array=1", str(SCRIPT)]).stdout.strip().split(";")[0]
        _wait_done(slurm, rerun)
        notes["rerun_states"] = slurm.states(rerun)
        notes["untouched"] = before == {s: (root / "reports" / A / f"{s}.json").stat().st_mtime_ns
                                        for s in ("ada", "cy")}
        notes["outputs"] = {p.name: p.read_text(errors="replace") for p in base.glob("*.out")}
        notes["cluster_dir"] = slurm.dir
    yield root, postgres, notes


def test_a_slurm_array_grades_the_class_and_a_cancelled_task_is_rerun_alone(slurm_gradebook):
    root, db, notes = slurm_gradebook
    outputs = "\n".join(f"--- {k}\n{v[-1500:]}" for k, v in sorted(notes["outputs"].items()))
    assert notes["states"] == {"0": "COMPLETED", "1": "CANCELLED", "2": "COMPLETED"}, notes["states"]
    first = notes["first_collect"]
    assert first.returncode == 1, first.stdout + first.stderr  # one submission not graded
    assert "not graded in this run" in first.stdout and "bo" in first.stdout, first.stdout
    assert "bo" not in totals(notes["scores_before_rerun"]), "the cancelled task's submission was graded"
    assert notes["rerun_states"] == {"1": "COMPLETED"}, notes["rerun_states"]
    assert notes["untouched"], "rerunning index 1 rewrote another submission's report"
    final = _collect(root, db)
    assert final.returncode == 0, final.stdout + final.stderr + outputs
    got = scores(db)
    before = {k: v for k, v in notes["scores_before_rerun"].items() if k[0] != "bo"}
    assert {k: v for k, v in got.items() if k[0] != "bo"} == before, "the rerun changed another student's rows"
    assert totals(got) == {s: want for s, (_, _, want) in STUDENTS.items()}, outputs
    assert "sandbox: root" in outputs or "root" in (root / "reports" / A / "ada.json").read_text()
    assert (root / "reports" / A / "class.html").is_file()
    assert not (root / "gradebook.db").exists(), "the grades went to SQLite, not PostgreSQL"
    assert not Path(notes["cluster_dir"]).exists(), "the cluster's folder was not removed"


def test_local_slurm_and_pod_job_give_identical_gradebooks(slurm_gradebook, base):
    from attnlab_grader.classroom import podjob, shard
    _, db, _ = slurm_gradebook
    slurm = scores(db)
    local_root = base / "local-course"
    write_class(local_root)
    summaries = shard.run_local(local_root, [A], 2, feedback=False, class_report=False)
    assert shard.exit_code(summaries) == 0, summaries[A].text()
    local = scores(f"sqlite:///{local_root / 'gradebook.db'}")
    pod_root = base / "pod-course"
    write_class(pod_root)
    listing = podjob.prepare(pod_root, A)
    code = ("import sys; from attnlab_grader.classroom import podjob\n"
            "r = podjob.grade_index(sys.argv[1], sys.argv[2], int(sys.argv[3]), None, 60)\n"
            "print(r['status'], r.get('sandbox', ''))")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(pod_root), A, str(index)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
             for index in range(len(listing))]  # the completions at once, one process (pod) each
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and out.startswith("graded landlock"), out + err[-2000:]
    pod = scores(f"sqlite:///{pod_root / 'gradebook.db'}")
    assert len(slurm) >= 3 * len(STUDENTS), slurm  # every item of every student, not an empty match
    assert local == slurm, "local and Slurm gradebooks differ"
    assert pod == slurm, "pod Job and Slurm gradebooks differ"
    assert totals(local) == {s: want for s, (_, _, want) in STUDENTS.items()}
