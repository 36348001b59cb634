"""The grading Job's command, run on this machine under the grading pod's restrictions
(``podlike.Pod``: non-root uid, no capabilities, no_new_privs, a seccomp filter refusing user
namespaces and mounts, read-only root filesystem, no network, no service-account token).

Proves: it grades a real submission there (honest: full marks; a known mistake: its items fail)
into the gradebook; and with any one restriction missing it refuses, saying why, and grades
nothing.  Needs root (to build the namespaces) and Landlock; skips with the reason otherwise.
"""
from __future__ import annotations

import csv
import json
import os
import random
import shutil
import socket
import sqlite3
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from attnlab_grader.records.course import REPO
from attnlab_grader.sandbox import landlock_abi

from .podlike import Pod

A = "02_scaled_dot_product_attention"
JOB = ["-m", "attnlab_grader.classroom.podjob", "grade"]


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "building the pod's namespaces needs root"
    for tool in ("unshare", "setpriv", "mount", "ip"):
        if not shutil.which(tool):
            return f"'{tool}' is missing"
    if landlock_abi() < 4:
        return f"Landlock ABI {landlock_abi()} < 4 on this kernel"
    return None


pytestmark = [pytest.mark.skipif(_why_not() is not None, reason=str(_why_not())),
              pytest.mark.xdist_group("grading-2")]


def _free_uid() -> int:
    """A uid unique to this run, owned by no account and no process (as a pod's runAsUser)."""
    import pwd
    used = {int(p) for p in os.listdir("/proc") if p.isdigit()}
    while True:
        uid = random.randrange(1_700_000_000, 1_800_000_000)
        try:
            pwd.getpwuid(uid)
        except KeyError:
            if uid not in used:
                return uid


@pytest.fixture(scope="module")
def course():
    """A prepared course (trusted step, done here as root) with two submissions, owned by the
    pod's uid; removed afterwards whatever happens."""
    from attnlab_grader.classroom import podjob
    from attnlab_grader.tests import qa
    uid = _free_uid()
    base = Path(tempfile.mkdtemp(prefix="attnlab-k8s-"))  # 0700, unique to the run
    try:
        root = base / "course"
        root.mkdir()
        qa.write(root, "honest-ada", A, qa.honest_submission(A, "honest-ada", "einsum_scores"))
        qa.write(root, "wrong-bo", A, qa.wrong_submission(A, "wrong-bo", "scores_no_scale"))
        assert podjob.prepare(root, A) == ["honest-ada", "wrong-bo"]
        with sqlite3.connect(root / "gradebook.db") as db:  # created once here, not raced by the completions
            tables = {r[0] for r in db.execute("select name from sqlite_master where type = 'table'")}
            known = {r[0] for r in db.execute("select id from student")}
        assert {"attnlab_grade_change", "attnlab_feedback_release"} <= tables, tables
        assert known == {"honest-ada", "wrong-bo"}, known
        for p in [root, *root.rglob("*")]:
            os.lchown(p, uid, uid)
        yield root, uid
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _pod(course, **kw) -> Pod:
    root, uid = course
    return Pod(uid=uid, writable=[str(root)],
               readable=sorted({str(REPO), os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}), **kw)


def _env(**extra) -> dict[str, str]:
    return {"PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1", **extra}


def _grade(course, index, pod=None, env=None):
    root, _ = course
    pod = pod or _pod(course)
    return pod.run([sys.executable, *JOB, str(root), "-a", A, "--index", str(index), "--item-timeout", "10"],
                   env or _env())


def _gradebook(root) -> dict[str, float]:
    with sqlite3.connect(root / "gradebook.db") as db:
        rows = db.execute(
            "select student.id, sum(coalesce(grade.manual_score, grade.auto_score)) from grade "
            "join submitted_notebook on grade.notebook_id = submitted_notebook.id "
            "join submitted_assignment on submitted_notebook.assignment_id = submitted_assignment.id "
            "join student on submitted_assignment.student_id = student.id group by student.id").fetchall()
    return dict(rows)


@pytest.mark.slow
def test_job_command_grades_each_completion_in_the_pod(course):
    root, uid = course
    with ThreadPoolExecutor(2) as pool:  # two completions at once, as the Job runs them
        runs = dict(zip((0, 1), pool.map(lambda i: _grade(course, i), (0, 1)), strict=True))
    for res in runs.values():
        assert res.returncode == 0, res.stdout + res.stderr
    results = {i: res.stdout for i, res in runs.items()}
    assert "honest-ada" in results[0] and ": graded 9/9" in results[0], results[0]
    assert "wrong-bo" in results[1] and ": graded 5/9" in results[1], results[1]
    assert "sandbox: landlock" in results[0]
    rep = json.loads((root / "reports" / A / "wrong-bo.json").read_text())
    failed = {g for g, item in rep["items"].items() if not item["ok"]}
    assert failed == {"test_attention_scores", "test_sdpa"}, rep["items"]  # the missing 1/sqrt(d_k)
    # the gradebook (one, for the class) holds both, and every file the Job wrote is the pod uid's
    assert _gradebook(root) == {"honest-ada": 9.0, "wrong-bo": 5.0}
    assert (root / "feedback" / "honest-ada" / A).is_dir()
    assert all(p.lstat().st_uid == uid for p in root.rglob("*")), "a file not written by the pod uid"
    # after the Job, the trusted step exports the class from the gradebook
    from click.testing import CliRunner

    from attnlab_grader.classroom.podjob import cli
    out = CliRunner().invoke(cli, ["finish", str(root), "-a", A, "--csv", str(root.parent / "grades.csv")])
    assert out.exit_code == 0, out.output
    rows = {r["student_id"]: r for r in csv.DictReader((root.parent / "grades.csv").open())}
    assert {s: float(r["score"]) for s, r in rows.items()} == {"honest-ada": 9.0, "wrong-bo": 5.0}


def test_an_index_outside_the_listing_is_an_error_not_a_grade(course):
    res = _grade(course, 2)
    assert res.returncode == 1 and "outside the listing of 2 submissions" in res.stderr, res.stderr


@pytest.mark.parametrize("missing, why", [
    ({"non_root": False}, "it runs as root"),
    ({"drop_caps": False}, "it holds Linux capabilities"),
    ({"no_new_privs": False, "seccomp": False}, "no_new_privs is off"),
    ({"seccomp": False}, "no seccomp filter is in force"),
    ({"read_only_root": False}, "the root filesystem is writable"),
    ({"sa_token": True}, "a service-account token is mounted"),
])
def test_job_command_refuses_outside_a_sandboxing_pod(course, missing, why):
    root, _ = course
    before = (root / "reports" / A).stat().st_mtime_ns if (root / "reports" / A).exists() else None
    res = _grade(course, 0, pod=_pod(course, **missing))
    assert res.returncode == 3, res.stdout + res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("refusing to grade: ")]
    assert any(why in ln for ln in lines), res.stderr
    assert all(ln.endswith(".") and ln.count(": ") >= 2 for ln in lines)  # one sentence, naming the fix
    after = (root / "reports" / A).stat().st_mtime_ns if (root / "reports" / A).exists() else None
    assert before == after, "a refused run must not grade"


def test_job_command_refuses_when_the_kubernetes_api_answers(course):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = _grade(course, 0, pod=_pod(course, no_egress=False, listener_port=port),
                 env=_env(KUBERNETES_SERVICE_HOST="127.0.0.1", KUBERNETES_SERVICE_PORT=str(port)))
    assert res.returncode == 3, res.stdout + res.stderr
    assert f"egress is open (127.0.0.1:{port} answered)" in res.stderr, res.stderr


def test_seccomp_filter_really_refuses_user_namespaces(course):
    """The stand-in for RuntimeDefault is itself tested: inside it, unshare of a user namespace fails."""
    probe = "import ctypes,sys;l=ctypes.CDLL(None,use_errno=True);sys.exit(0 if l.unshare(0x10000000)==0 else 7)"
    res = _pod(course).run([sys.executable, "-c", probe], _env())
    assert res.returncode == 7, res.stdout + res.stderr
    res = _pod(course, seccomp=False).run([sys.executable, "-c", probe], _env())
    assert res.returncode == 0, "without the filter this machine allows user namespaces: the test proves nothing"


@pytest.mark.slow
def test_sandbox_attack_tests_pass_in_the_pod_with_landlock(course):
    """autograder/attnlab_grader/tests/test_sandbox.py (files, network, uid, signals, unmounting, threads, forks,
    fork bomb, memory, subclasses, the run-time watch), run as the pod's uid inside the pod with the
    ``landlock`` mechanism: what the namespaces guarantee elsewhere, Landlock and the pod guarantee here."""
    # the suite's gate asks for a default mechanism (none here: no namespaces); landlock is pinned
    gate = ("import sys, pytest, attnlab_grader.sandbox as s\n"
            "s.sandbox_support = lambda: s.mechanism_support()['landlock']\n"
            "sys.exit(pytest.main(sys.argv[1:]))")
    res = _pod(course).run(
        [sys.executable, "-c", gate, "-p", "no:cacheprovider", "-p", "no:randomly", "-q", "-n", "0",
         "-x", str(REPO / "autograder" / "attnlab_grader" / "tests" / "test_sandbox.py")],
        _env(ATTNLAB_TEST_MECHANISMS="landlock"), timeout=300)
    tail = (res.stdout + res.stderr)[-3000:]
    assert res.returncode == 0, tail
    assert " passed" in tail and "skipped" not in tail, tail
