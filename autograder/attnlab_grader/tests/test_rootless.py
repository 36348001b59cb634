"""Grading without root, as an instructor on a shared hub.

When the suite runs as root, this module creates an ordinary user unique to the run
(``rootless.make_user``, removed afterwards, pass or fail) and:

* grades a small class in a course folder that user owns, first **as root** (the files root
  creates must be handed back to the owner), then **as that user** over root's results (a
  root-owned leftover would fail here, as formgrader's "Generate feedback" did), and requires
  the same status, score and per-item verdict for every submission;
* runs ``test_sandbox.py`` as that user (mechanisms ``userns`` and ``bwrap``).

When the suite itself runs as an ordinary user, every sandbox and attack test is already rootless.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from attnlab_grader.tests import qa
from attnlab_grader.records.course import REPO

from attnlab_grader.tests import rootless
from attnlab_grader.tests.conftest import needs_sandbox
from attnlab_grader.tests.test_attacks import CASES, A, _nb

pytestmark = [needs_sandbox, pytest.mark.slow, pytest.mark.xdist_group("grading-2"),
              pytest.mark.skipif(os.geteuid() != 0, reason="already an ordinary user: every sandbox test is rootless"),
              pytest.mark.skipif(rootless.why_not() is not None, reason=f"cannot switch users: {rootless.why_not()}")]

#: Honest work, isolation attacks and "write it yourself" bypasses; each must grade the same.
SUBSET = ("killparent", "forkbomb", "readsolutions", "thread", "forge", "transformer", "honestalt")
GRADE = ("import json, sys\nfrom attnlab_grader.classroom.pipeline import grade\n"
         "def _json(r):\n    return dict(r, items={g: v.to_json() for g, v in r['items'].items()})\n"
         "s = grade(sys.argv[1], sys.argv[2], jobs=2, feedback=True, progress=False, item_timeout=3)\n"
         "print('RESULT ' + json.dumps({'sandbox': s.sandbox, 'reports': {r['student']: _json(r) for r in s.reports}}))\n")


def _verdicts(reports: dict) -> dict:
    return {s: (r["status"], r.get("score"), {g: i["ok"] for g, i in r.get("items", {}).items()})
            for s, r in reports.items()}


def _root_owned(root: Path) -> list[str]:
    return [str(p) for p in [root, *root.rglob("*")] if p.lstat().st_uid == 0]


@pytest.fixture(scope="module")
def user():
    name = rootless.make_user()
    try:
        yield name
    finally:
        rootless.remove_user(name)


@pytest.fixture(scope="module")
def course(user):
    import pwd
    pw = pwd.getpwnam(user)
    root = Path(tempfile.mkdtemp(prefix="attnlab-instructor-"))
    home = Path(tempfile.mkdtemp(prefix="attnlab-home-"))
    qa.write(root, "honest", A, _nb("honest"))
    for student in SUBSET:
        qa.write(root, student, A, CASES[student][0](_nb(student)))
    for d in (root, home):  # the instructor's own folders (collected submissions included)
        for p in [d, *d.rglob("*")]:
            os.lchown(p, pw.pw_uid, pw.pw_gid)
        os.chmod(d, 0o755)
    yield root, home
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)


def test_root_then_user_grade_identically_and_leave_no_root_files(user, course):
    from attnlab_grader.classroom.pipeline import grade
    root, home = course
    as_root = grade(root, A, jobs=2, feedback=True, progress=False, item_timeout=3)
    assert as_root.sandbox.startswith("root"), as_root.sandbox
    assert _root_owned(root) == [], "root grading left root-owned files in the instructor's course"
    res = rootless.run_as(user, [sys.executable, "-c", GRADE, str(root), A],
                          expose=[*rootless.python_paths(), str(REPO), str(root), str(home)], cwd=str(root),
                          env={"HOME": str(home), "PATH": f"{sys.prefix}/bin:/usr/bin:/bin", "PYTHONPATH": str(REPO),
                               "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"})
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert res.returncode == 0 and line, (res.returncode, res.stdout[-2000:], res.stderr[-3000:])
    as_user = json.loads(line[len("RESULT "):])
    assert as_user["sandbox"].startswith(("userns", "bwrap")), as_user["sandbox"]
    assert all(r["sandbox"] == as_user["sandbox"] for r in as_user["reports"].values())  # every report says it
    ours = _verdicts({r["student"]: dict(r, items={g: v.to_json() for g, v in r["items"].items()})
                      for r in as_root.reports})
    theirs = _verdicts(as_user["reports"])
    assert set(ours) == set(theirs) == {"honest", *SUBSET}
    for student in ours:
        assert ours[student] == theirs[student], (student, ours[student], theirs[student])
    assert ours["honest"][1] == ours["honestalt"][1] == 9.0
    assert _root_owned(root) == []


def test_sandbox_tests_pass_as_an_ordinary_user(user, course):
    _, home = course
    res = rootless.run_as(user, [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "0",
                                 "-rs", "autograder/attnlab_grader/tests/test_sandbox.py"],
                          expose=[*rootless.python_paths(), str(REPO), str(home)], cwd=str(REPO),
                          env={"HOME": str(home), "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"})
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert " passed" in res.stdout and " failed" not in res.stdout, res.stdout[-2000:]
