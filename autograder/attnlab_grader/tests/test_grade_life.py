"""A grade's life, kept: each step done twice, checked as the people involved see it (``grades.csv``,
the feedback page, the LMS export file, the grade summary and the class report).

One class of set 01 (four students, each with a written answer) is graded by the documented command,
its written answers graded by hand through nbgrader's gradebook as formgrader does, then:

1. an extension is granted and the whole class is graded again (and one student by formgrader's
   Autograde): every manual grade, comment, score, penalty and status stays, and the LMS export has a
   grade for every student;
2. one student resubmits a changed written answer: only that answer goes back to manual grading, the
   summary, the class report and ``grades.csv`` say which, and the LMS export refuses to write (exit 1,
   the row listed) until ``--allow-partial`` or the TA grades it again;
3. two students (real Unix accounts, umask 077) file regrade requests at the same moment into the inbox
   of the class's own course id; the files are readable by the graders' group and by no other student;
   the queue takes both, keeps a file that is not a request; the regrade changes a late student's score
   and the late penalty follows in ``grades.csv`` and in the released feedback.

The steps share the class and run in this order (about 60 s of grading in all).
"""
from __future__ import annotations

import csv
import grp
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from attnlab_grader.classroom.main import cli
from attnlab_grader.tests import qa

from attnlab_grader.tests.conftest import needs_sandbox

A = "01_routing_and_soft_lookup"
REPO = Path(__file__).resolve().parents[3]
RUN = secrets.token_hex(3)
#: student ids, unique to the run (test 3 makes them real accounts of the same names)
ANA, BEN, CY, DEE = (f"gl{RUN}{k}" for k in "abcd")
STAMPS = {ANA: "2026-11-30 10:00:00.000000 UTC",   # on time
          BEN: "2026-12-02 12:00:00.000000 UTC",   # 1.5 days late: 2 started days, 20 %
          CY: "2026-11-30 11:00:00.000000 UTC",    # on time; resubmits a changed written answer
          DEE: "2026-12-02 12:00:00.000000 UTC"}   # as late as ben; gets a 2-day extension after grading
WRITTEN = "agreement_trap"  # the set's written answer (2 points)
MANUAL = {ANA: 2.0, BEN: 0.0, CY: 2.0, DEE: 1.0}  # what the TA gives it

pytestmark = [needs_sandbox, pytest.mark.slow, pytest.mark.xdist_group("grade-life")]


def _rows(path) -> dict[str, dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {r["student_id"]: r for r in csv.DictReader(fh) if r["assignment"] == A}


def _run(*args, ok=True, env=None):
    res = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False, env=env)
    if ok:
        assert res.exit_code == 0, res.output
    return res


def _grade(root) -> str:
    proc = subprocess.run([sys.executable, "-m", "attnlab_grader", "grade", str(root), "-a", A, "--jobs", "2"],
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"graded {len(STAMPS)}, failed 0" in proc.stdout, proc.stdout
    return proc.stdout


def _submit(root, student, answer: str) -> None:
    nb = qa.reference_submission(A, student)
    qa.cell(nb, WRITTEN).source = answer
    path = qa.write(root, student, A, nb)
    (path.parent / "timestamp.txt").write_text(STAMPS[student])
    (path.parent / "submission_secret.txt").write_text(secrets.token_hex(16))  # as `nbgrader submit` writes


def _grade_by_hand(db, scores: dict[str, float]) -> None:
    """What formgrader's grade API does when a TA enters a score (nbgrader's GradeHandler.put)."""
    from nbgrader.api import Gradebook
    with Gradebook(db, "attnlab") as gb:
        for student, score in scores.items():
            grade = gb.find_grade(WRITTEN, A, A, student)
            grade.manual_score = score
            grade.needs_manual_grade = False
            gb.find_comment(WRITTEN, A, A, student).manual_comment = f"TA note for {student}: {score:g} points"
        gb.db.commit()


def _feedback(root, student) -> str:
    return (root / "feedback" / student / A / f"{A}.html").read_text(encoding="utf-8")


def _canvas_roster(path) -> Path:
    path.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n"
                    + "".join(f"S{i},{100 + i},s{i},{s},A\n" for i, s in enumerate(STAMPS)))
    return path


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The class graded once, its written answers graded by hand and exported: ``(root, db)``."""
    from attnlab_grader.records.course import _quiet_imports
    _quiet_imports()
    root = tmp_path_factory.mktemp("grade-life") / "course"
    for student in STAMPS:
        _submit(root, student, f"The scores of {student} grow with d_k, so the softmax saturates.")
    db = f"sqlite:///{root / 'gradebook.db'}"
    _run("deadline", root, "-a", A, "--due", "2026-12-01 00:00", "--per-day", 10, "--cap", 30)
    _grade(root)
    rows = _rows(root / "grades.csv")
    assert {s: rows[s]["status"] for s in STAMPS} == dict.fromkeys(STAMPS, "manual_pending")
    _grade_by_hand(db, MANUAL)
    _run("lms-export", root, "--format", "canvas", "--roster", _canvas_roster(root / "roster.csv"),
         "--out", root / "lms-first.csv")  # exports the sheet from the gradebook first
    return root, db


def test_regrade_of_the_class_after_an_extension_keeps_every_manual_grade(course, tmp_path):
    """Re-grading the whole class (nobody resubmitted) after an extension: every written answer stays
    graded with the TA's score, the penalties match the scores (dee's gone with her extension),
    the feedback shows the TA's score, and the LMS export has a grade for every student."""
    root, db = course
    before = _rows(root / "grades.csv")
    assert {s: before[s]["status"] for s in STAMPS} == dict.fromkeys(STAMPS, "graded"), before
    assert float(before[DEE]["late_penalty"]) == pytest.approx(0.2 * float(before[DEE]["score"]))
    _run("extension", root, "-a", A, "-s", DEE, "--days", 2, "--reason", "illness")
    out = _grade(root)
    assert "MANUAL" not in out, out
    after = _rows(root / "grades.csv")
    for s in STAMPS:
        assert after[s]["status"] == "graded", (s, after[s])
        for col in ("score", "late_penalty", "final_score", "max_score"):
            if s == DEE and col in ("late_penalty", "final_score"):
                continue
            assert float(after[s][col]) == pytest.approx(float(before[s][col])), (s, col, before[s], after[s])
        assert float(after[s]["late_penalty"]) == pytest.approx(
            0.2 * float(after[s]["score"]) if s == BEN else 0.0), (s, after[s])
        assert float(after[s]["final_score"]) == pytest.approx(
            float(after[s]["score"]) - float(after[s]["late_penalty"]))
    assert after[DEE]["extension"] == "2 d" and after[DEE]["late_by"] == ""
    page = _feedback(root, ANA)  # the regenerated feedback keeps the TA's score and comment
    assert f"Score: {MANUAL[ANA]:.1f} / 2.0" in page and f"TA note for {ANA}: 2 points" in page
    from nbgrader.api import Gradebook
    with Gradebook(db, "attnlab") as gb:
        for s, score in MANUAL.items():
            g = gb.find_grade(WRITTEN, A, A, s)
            assert (g.manual_score, g.needs_manual_grade) == (score, False), s
    # formgrader's Autograde button on one student (nbgrader's API, formgrader's configuration) keeps it too
    from nbgrader.apps import NbGraderAPI

    from attnlab_grader.records.course import load_config
    cfg = load_config(root)
    del cfg.AutogradeOutcome["fail_when_kept"]
    cfg.CourseDirectory.submitted_directory = "submitted"
    assert NbGraderAPI(config=cfg).autograde(A, ANA, force=True, create=True)["success"]
    with Gradebook(db, "attnlab") as gb:
        g = gb.find_grade(WRITTEN, A, A, ANA)
        assert (g.manual_score, g.needs_manual_grade) == (MANUAL[ANA], False)
    res = _run("lms-export", root, "--format", "canvas", "--roster", _canvas_roster(tmp_path / "r.csv"),
               "--out", tmp_path / "canvas.csv")
    assert "not exported" not in res.output
    with open(tmp_path / "canvas.csv", newline="") as fh:
        got = {r["SIS Login ID"]: r[A] for r in csv.DictReader(fh) if r["Student"] != "Points Possible"}
    assert got == {s: after[s]["final_score"] for s in STAMPS}


def test_resubmission_sends_only_the_changed_answer_back_to_manual_grading(course, tmp_path):
    """cy resubmits a different written answer: only cy's answer waits for the TA again, and the
    grade summary, the class report and grades.csv name it; the LMS export then fails listing cy
    and writes nothing, writes the others with --allow-partial, and everyone once the TA grades it."""
    root, db = course
    _submit(root, CY, "A different answer: the variance of q.k grows like d_k.")
    out = _grade(root)
    assert f"MANUAL  {CY}: answer changed since it was graded by hand, grade again in formgrader: {WRITTEN}" in out
    assert out.count("MANUAL") == 1, out
    rows = _rows(root / "grades.csv")
    assert rows[CY]["status"] == "manual_pending" and WRITTEN in rows[CY]["reason"], rows[CY]
    assert "answer changed" in rows[CY]["reason"]
    assert {rows[s]["status"] for s in (ANA, BEN, DEE)} == {"graded"}
    _run("report", root, "-a", A)
    html = (root / "reports" / A / "class.html").read_text(encoding="utf-8")
    assert "Grade again by hand" in html and CY in html.split("Grade again by hand")[1].split("</ul>")[0]
    # the export: cy listed with the reason, nothing written, exit 1
    roster, dest = _canvas_roster(tmp_path / "r.csv"), tmp_path / "canvas.csv"
    res = _run("lms-export", root, "--format", "canvas", "--roster", roster, "--out", dest, ok=False)
    assert res.exit_code == 1 and not dest.exists(), res.output
    assert f"not exported: {CY}/{A}: status manual_pending" in res.output and WRITTEN in res.output
    assert "--allow-partial" in res.output
    res = _run("lms-export", root, "--format", "canvas", "--roster", roster, "--out", dest, "--allow-partial")
    with open(dest, newline="") as fh:
        got = {r["SIS Login ID"]: r[A] for r in csv.DictReader(fh) if r["Student"] != "Points Possible"}
    assert got[CY] == "" and all(got[s] == rows[s]["final_score"] for s in (ANA, BEN, DEE))
    _grade_by_hand(db, {CY: 1.0})
    _run("lms-export", root, "--format", "canvas", "--roster", roster, "--out", dest)
    with open(dest, newline="") as fh:
        got = {r["SIS Login ID"]: r[A] for r in csv.DictReader(fh) if r["Student"] != "Points Possible"}
    assert float(got[CY]) == pytest.approx(float(rows[CY]["score"]) - 1.0)  # 2 -> 1 on the written answer


@pytest.fixture
def accounts(tmp_path):
    """ben and ana as real Unix accounts, a TA in the graders' group, and a class configuration
    (course id and exchange) that every account reads: ``(config_dir, exchange, group)``; all of it
    removed afterwards."""
    if os.geteuid() != 0 or not shutil.which("useradd"):
        pytest.skip("needs root and useradd to make the students' accounts")
    group, ta = f"gl{RUN}g", f"gl{RUN}t"
    made: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="attnlab-gl-"))
    try:
        subprocess.run(["groupadd", group], check=True, capture_output=True)
        for name, extra in ((ANA, []), (BEN, []), (ta, ["-G", group])):
            subprocess.run(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", *extra, name], check=True,
                           capture_output=True)
            made.append(name)
        os.chmod(base, 0o755)
        cfg, exchange = base / "jupyter", base / "exchange"
        cfg.mkdir()
        exchange.mkdir()
        (cfg / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.course_id = 'cls{RUN}'\n"
                                                f"c.Exchange.root = {str(exchange)!r}\n")
        yield cfg, exchange, group, ta
    finally:
        for name in made:
            subprocess.run(["userdel", name], capture_output=True)
        subprocess.run(["groupdel", group], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _as(user: str, *cmd: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``cmd`` as ``user`` (umask 077, the user's own groups) from the repository root, with the
    interpreter and the clone readable as on a class machine (:func:`rootless.run_as`)."""
    from attnlab_grader.tests.rootless import python_paths, run_as
    return run_as(user, ["sh", "-c", 'umask 077; exec "$@"', "sh", *cmd], expose=[*python_paths(), str(REPO)],
                  env=env, cwd=str(REPO), timeout=300)


def test_two_students_file_regrade_requests_at_once_and_the_late_penalty_follows(course, accounts, monkeypatch):
    """The inbox is the class's own (course id from its configuration, not 'attnlab'); two students'
    requests filed at the same moment both arrive, readable by the graders' group only; a file that
    is not a request is kept; the regrade of late ben's written answer recomputes his penalty in
    grades.csv and in the feedback released to him."""
    root, db = course
    cfg, exchange, group, ta = accounts
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(cfg))
    res = _run("regrade-queue", root, "--open-inbox", "--group", group)
    box = exchange / f"cls{RUN}" / "regrade"
    assert f"inbox: {box}" in res.output and not (exchange / "attnlab").exists(), res.output
    st = box.stat()
    assert oct(st.st_mode & 0o7777) == "0o3733" and st.st_gid == grp.getgrnam(group).gr_gid
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(2) as pool:  # both students at the same moment
        done = list(pool.map(lambda s: _as(s, sys.executable, "-m", "attnlab.cli", "regrade-request", A, WRITTEN,
                                           "--reason", f"{s}: my answer names the variance",
                                           env={"JUPYTER_CONFIG_DIR": str(cfg), "USER": s, "LOGNAME": s}),
                             (BEN, ANA)))
    for p in done:
        assert p.returncode == 0, p.stdout + p.stderr
        assert "received" in p.stdout, p.stdout
    files = sorted(box.glob("*.json"))
    assert len(files) == 2, files
    for f in files:
        fst = f.stat()
        assert oct(fst.st_mode & 0o777) == "0o640" and fst.st_gid == grp.getgrnam(group).gr_gid, f
        owner = pwd.getpwuid(fst.st_uid).pw_name
        other = ANA if owner == BEN else BEN
        ta_read = _as(ta, "cat", str(f))
        assert ta_read.returncode == 0 and f'"student": "{owner}"' in ta_read.stdout, ta_read.stderr
        peek = _as(other, "cat", str(f))  # the graders' group reads it; another student does not
        assert peek.returncode != 0 and "Permission denied" in peek.stderr, "another student read a request"
    assert _as(ANA, "ls", str(box)).returncode != 0, "a student could list the inbox"
    junk = box / f"{ANA}+garbage.json"
    junk.write_text("this is not a request")
    res = _run("regrade-queue", root)
    assert f"KEPT {junk}: not readable as a regrade request" in res.output, res.output
    assert junk.exists(), "a file that is not a request must be kept, never deleted"
    for s in (BEN, ANA):
        assert f"[open] {s}/{A} {WRITTEN}: {s}: my answer names the variance" in res.output, res.output
    assert sorted(box.glob("*.json")) == [junk]
    # handled: ben's written answer 0 -> 2; his penalty (20 %) follows the new score
    before = _rows(root / "grades.csv")[BEN]
    _run("regrade", root, "-a", A, "-s", BEN, "--item", WRITTEN, "--score", 2, "--reason", "variance is right")
    _run("regrade", root, "-a", A, "-s", ANA, "--item", WRITTEN, "--score", 2, "--reason", "already full marks")
    row = _rows(root / "grades.csv")[BEN]
    assert float(row["score"]) == pytest.approx(float(before["score"]) + 2)
    assert float(row["late_penalty"]) == pytest.approx(0.2 * float(row["score"])), row
    assert float(row["final_score"]) == pytest.approx(0.8 * float(row["score"])), row
    assert "[open]" not in _run("regrade-queue", root).output
    from attnlab_grader.records.course import api_for, load_config
    Path(load_config(root).Exchange.root).mkdir(exist_ok=True)  # the grader's own exchange (as a hub has one)
    res = api_for(root).release_feedback(A, BEN)
    assert res["success"], res["error"][-3000:]
    page = _feedback(root, BEN)
    assert f"{float(row['late_penalty']):g} point(s) taken" in page, page[:2000]
    assert f"{float(before['late_penalty']):g} point(s) taken" not in page


def test_a_request_the_graders_cannot_read_is_kept_and_reported(accounts):
    """The grader's own account (not root) collects the queue: a request file the graders' group may
    not read (written 0600 by hand, as the issue's students' files were) is listed as KEPT with what
    to do and stays in the inbox; nothing is stored or deleted for it."""
    cfg, _, group, ta = accounts
    base = cfg.parent
    course, exchange = base / "ta-course", base / "ta-exchange"
    for d in (course, exchange):
        d.mkdir()
        shutil.chown(d, ta, group)
    grader = [sys.executable, "-m", "attnlab_grader", "regrade-queue", str(course), "--exchange", str(exchange),
              "--course-id", f"cls{RUN}"]
    made = _as(ta, *grader, "--open-inbox", "--group", group)
    assert made.returncode == 0, made.stdout + made.stderr
    box = exchange / f"cls{RUN}" / "regrade"
    request = box / f"{BEN}+{A}+20261201T000000+abcd.json"
    body = ('{"student": "%s", "assignment": "%s", "item": "%s", "reason": "by hand", '
            '"filed_at": "2026-12-01T00:00:00"}' % (BEN, A, WRITTEN))
    wrote = _as(BEN, "sh", "-c", f"printf '%s' '{body}' > {request}")
    assert wrote.returncode == 0 and oct(request.stat().st_mode & 0o777) == "0o600", wrote.stderr
    res = _as(ta, *grader)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"KEPT {request}: not readable as a regrade request (the grader account may not read it" in res.stderr
    assert request.exists(), "an unreadable request was deleted"
    assert "Kept in the inbox" in (course / "reports" / "regrade-queue.html").read_text()
