"""Instructor features end to end on one really graded class (set 01, five students, the
documented ``attnlab-grade`` commands): the merged grades sheet, deadlines and extensions, regrade
requests with their history and the notice on re-release, feedback released from current grades,
Autograde's failure when it could not grade, and the LMS exports.

The class is graded once per module (about 10 s) by ``python -m attnlab_grader grade`` in a
subprocess; every other step runs the commands in process (click's runner) against that course.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from attnlab_grader.classroom.main import cli
from attnlab_grader.tests import qa

from attnlab_grader.tests.conftest import needs_sandbox

A = "01_routing_and_soft_lookup"
REPO = Path(__file__).resolve().parents[3]
DUE = "2026-12-01 00:00"
STAMPS = {  # nbgrader's timestamp.txt format
    "alice": "2026-11-30 10:00:00.000000 UTC",   # on time
    "bob": "2026-12-02 12:00:00.000000 UTC",     # 1.5 days late: 2 started days
    "carol": "2026-12-02 12:00:00.000000 UTC",   # same, but has a 2-day extension
    "dave": "2026-12-10 00:00:00.000000 UTC",    # 9 days late: past the hard deadline
    "erin": "2026-11-30 09:00:00.000000 UTC",
    "frank": "2026-11-30 09:00:00.000000 UTC",
    "gina": "2026-11-30 09:00:00.000000 UTC",
    "hana": "2026-11-30 09:00:00.000000 UTC",   # Autograde with the sandbox unavailable
    "ivan": "2026-12-02 12:00:00.000000 UTC",   # late; gets an extension after grading
}

# frank wrote his own answers; gina handed in frank's with names and comments changed
FRANK = {
    "path_lengths": """def path_lengths(n: int, k: int) -> list[int]:
    recurrent = n - 1
    conv_layers = -(-(n - 1) // (k - 1))
    dil_layers = 0
    reach = 1
    while reach < n:
        reach = reach * k
        dil_layers = dil_layers + 1
    return [recurrent, conv_layers, dil_layers, 1]""",
    "apply_temperature": """def apply_temperature(logits, temperature):
    if not (temperature > 0):
        raise ValueError("temperature has to be positive")
    return logits * (1.0 / temperature)""",
    "soft_lookup": """def soft_lookup(query, keys, values, temperature=1.0):
    logits = torch.matmul(query, keys.transpose(-1, -2))
    logits = apply_temperature(logits, temperature)
    logits = logits - logits.amax(dim=-1, keepdim=True)
    expd = torch.exp(logits)
    attn = expd / expd.sum(-1, keepdim=True)
    out = torch.matmul(attn, values)
    return out, attn""",
    "hard_lookup": """def hard_lookup(query, keys, values):
    sims = torch.matmul(query, keys.transpose(-1, -2))
    idx = sims.argmax(dim=-1)
    picked = (idx.unsqueeze(-1) == torch.arange(keys.shape[-2])).to(values.dtype)
    return torch.matmul(picked, values)""",
}
GINA = {k: v.replace("logits", "z").replace("attn", "probs").replace("expd", "ex").replace("sims", "s")
        .replace("picked", "sel").replace("recurrent", "r").replace("conv_layers", "c")
        .replace("dil_layers", "d").replace(":\n", ":  # my own solution\n", 1) for k, v in FRANK.items()}

DAY = 86400.0
#: practice in the students' own homes: (skill, mastered, [(days ago, correct, named mistake)])
PRACTICE = {
    "alice": [("soft_lookup_weights", True, [(0.2, False, "argmax_lookup"), (0.1, True, None), (0.05, True, None)]),
              ("path_lengths", False, [(1.0, False, "argmax_lookup")])],
    "bob": [("soft_lookup_weights", False, [(20.0, False, "argmax_lookup"), (19.5, False, "normalize_without_exp")])],
}


def _practise(home, learner, skills):
    import time

    from attnlab.practice.record import SkillRecord
    from attnlab.practice.store import ProgressStore
    store = ProgressStore(learner=learner, home=home)
    now = time.time()
    for name, mastered, answers in skills:
        history = tuple((now - days * DAY, ok, 0, mistake) for days, ok, mistake in answers)
        store.put(name, SkillRecord(attempts=len(answers), correct=sum(ok for _, ok, _ in answers),
                                    mastered=mastered, history=history))


pytestmark = [needs_sandbox, pytest.mark.slow, pytest.mark.xdist_group("instructor")]


def _rows(path) -> dict[tuple[str, str], dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {(r["assignment"], r["student_id"]): r for r in csv.DictReader(fh)}


def _run(*args, ok=True, env=None, group=cli):
    res = CliRunner().invoke(group, [str(a) for a in args], catch_exceptions=False, env=env)
    if ok:
        assert res.exit_code == 0, res.output
    return res


def _student(*args, ok=True, env=None):
    """A student's command: the learner's ``attnlab`` (``attnlab regrade-request``, ``attnlab practice-attach``)."""
    from attnlab.cli import main
    return _run(*args, ok=ok, env=env, group=main)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A graded class: due date, 10 %/day capped at 30 %, 0 after 7 days; carol's extension from
    a file; a sheet that already holds a row of another assignment."""
    from nbgrader.api import Gradebook

    from attnlab_grader.records.course import _quiet_imports
    _quiet_imports()  # nbgrader reads the gradebook schema revision in-process (no `alembic` on PATH needed)
    root = tmp_path_factory.mktemp("instructor") / "course"
    for student, stamp in STAMPS.items():
        nb = qa.reference_submission(A, student)
        if student in ("erin", "carol"):  # a written answer: an item waits for manual grading (no grade yet)
            for cell in nb.cells:
                meta = cell.metadata.get("nbgrader", {})
                if cell.cell_type == "markdown" and meta.get("solution") and meta.get("grade"):
                    cell.source = "Because the scores grow with the dimension."
        for gid, code in {"frank": FRANK, "gina": GINA}.get(student, {}).items():
            qa.cell(nb, gid).source = code
        path = qa.write(root, student, A, nb)
        if student in PRACTICE:  # the student attaches their own practice summary before submitting
            home = tmp_path_factory.mktemp(f"home-{student}")
            _practise(home, student, PRACTICE[student])
            res = _student("practice-attach", path, "--home", home, env={"ATTNLAB_LEARNER": student})
            assert "attached your practice summary" in res.output, res.output
        (path.parent / "timestamp.txt").write_text(stamp)
        (path.parent / "submission_secret.txt").write_text(os.urandom(16).hex())
    db = f"sqlite:///{root / 'gradebook.db'}"
    with Gradebook(db, "attnlab") as gb:  # the roster, as `nbgrader db student import` makes it
        for student in STAMPS:
            gb.update_or_create_student(student, first_name=student.title(), last_name="Test")
    _run("deadline", root, "-a", A, "--due", DUE, "--per-day", 10, "--cap", 30, "--zero-after", 7)
    ext = root / "extensions.csv"
    ext.write_text(f"student_id,assignment,days,reason\ncarol,{A},2,accommodation\n")
    _run("extension", root, "--file", ext)
    # a row another grader exported earlier for another assignment: grading must keep it
    with open(root / "grades.csv", "a", newline="") as fh:
        csv.writer(fh).writerow(["00_other", "zed", "5", "10", "5", "graded", "", "", "", "", "", "0", "5"])
    proc = subprocess.run([sys.executable, "-m", "attnlab_grader", "grade", str(root), "-a", A, "--jobs", "2"],
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"graded {len(STAMPS)}, failed 0" in proc.stdout, proc.stdout
    return root, db


def test_deadline_late_submission_penalised_and_extension_honoured_in_csv(course):
    root, _ = course
    rows = _rows(root / "grades.csv")
    alice, bob, carol, dave = (rows[(A, s)] for s in ("alice", "bob", "carol", "dave"))
    for r in (alice, bob, carol, dave):
        assert float(r["score"]) > 0 and r["status"] in ("graded", "manual_pending"), r
    # on time: no penalty
    assert alice["late_by"] == "" and float(alice["late_penalty"]) == 0
    assert float(alice["final_score"]) == float(alice["score"])
    assert alice["due"] == "2026-12-01 00:00 UTC"
    # 1.5 days late = 2 started days x 10 %
    score = float(bob["score"])
    assert bob["late_by"] == "1 d 12 h" and float(bob["late_penalty"]) == pytest.approx(0.2 * score)
    assert float(bob["final_score"]) == pytest.approx(0.8 * score)
    # the same time with a 2-day extension: on time, due date moved
    assert carol["extension"] == "2 d" and carol["due"] == "2026-12-03 00:00 UTC"
    assert carol["late_by"] == "" and float(carol["final_score"]) == float(carol["score"])
    # past the hard deadline: zero
    assert float(dave["final_score"]) == 0 and float(dave["late_penalty"]) == pytest.approx(float(dave["score"]))
    # the penalty is nbgrader's own (formgrader and `nbgrader export` see it)
    from nbgrader.api import Gradebook
    with Gradebook(course[1], "attnlab") as gb:
        assert gb.find_submission(A, "bob").late_submission_penalty == pytest.approx(0.2 * score)
        assert str(gb.find_assignment(A).duedate) == "2026-12-01 00:00:00"


def test_extension_granted_after_grading_is_honoured_and_bad_files_change_nothing(course):
    root, _ = course
    bad = root / "bad-extensions.csv"
    for text, says in [("name,days\nbob,2\n", "header"),
                       (f"student_id,assignment,days\nivan,{A},two\n", "line 2: days and hours must be numbers"),
                       (f"student_id,assignment,days\nivan,{A},1\nbobby,{A},1\n", "line 3: unknown student 'bobby'"),
                       ("student_id,assignment,days\nivan,99_nope,1\n", "unknown assignment '99_nope'")]:
        bad.write_text(text)
        res = _run("extension", root, "--file", bad, ok=False)
        assert res.exit_code == 1 and says in res.output and "nothing was changed" in res.output, res.output
        assert "Traceback" not in res.output
    rows = _rows(root / "grades.csv")
    assert rows[(A, "carol")]["extension"] == "2 d", "a refused file must not touch existing extensions"
    assert float(rows[(A, "ivan")]["late_penalty"]) > 0
    # a one-line grant after grading: ivan's penalty goes without re-grading, the sheet says so
    _run("extension", root, "-a", A, "-s", "ivan", "--days", 3, "--reason", "illness")
    ivan = _rows(root / "grades.csv")[(A, "ivan")]
    assert ivan["extension"] == "3 d" and ivan["late_by"] == "" and float(ivan["late_penalty"]) == 0
    assert float(ivan["final_score"]) == float(ivan["score"])


def test_grades_sheet_merges_and_reasons_are_words(course):
    root, db = course
    rows = _rows(root / "grades.csv")
    assert ("00_other", "zed") in rows, "grading one assignment dropped another assignment's row"
    assert {s for (a, s) in rows if a == A} == set(STAMPS)
    # the plugin merges too (`nbgrader export` path): one assignment re-exported, the rest kept
    from attnlab_grader.classroom.pipeline import export
    export(root, A, None)
    again = _rows(root / "grades.csv")
    assert set(again) == set(rows) and not list(root.glob(".grades-*"))
    from attnlab_grader.records.reasons import reason_text
    text = reason_text({"kept_previous": {"why": "no user namespaces"}})
    assert "kept_previous" not in text and "why" not in text
    assert text.startswith("not re-graded: the grader could not run (no user namespaces)")


def test_regrade_request_reaches_queue_with_history_and_notice(course, tmp_path, monkeypatch):
    root, db = course
    from nbgrader.api import Gradebook

    from attnlab_grader.records.course import load_config
    from attnlab_grader.records.history import NOTICE_ID
    with Gradebook(db, "attnlab") as gb:
        grades = gb.find_submission_notebook(A, A, "erin").grades
        auto = next(g.name for g in grades if g.auto_score is not None and g.max_score > 0)
        manual = next(g.name for g in grades if g.auto_score is None and g.manual_score is None)
        before = gb.find_grade(auto, A, A, "erin").score
    exchange = load_config(root).Exchange.root
    # no inbox yet: the student is told so
    res = _student("regrade-request", A, auto, "--reason", "x", "--exchange", exchange, "--course", "attnlab", ok=False)
    assert res.exit_code == 1 and "takes no regrade requests yet" in res.output
    _run("regrade-queue", root, "--exchange", exchange, "--open-inbox", "--course-id", "attnlab")
    assert oct(os.stat(Path(exchange, "attnlab", "regrade")).st_mode & 0o7777) == "0o3733"
    monkeypatch.setenv("JUPYTERHUB_USER", "erin")
    _student("regrade-request", A, auto, "--reason", "my routing is right for ties", "--exchange", exchange)
    # the old spelling still files it, after one line naming the command it is now
    res = _run("regrade-request", A, manual, "--reason", "please grade it", "--exchange", exchange)
    notice, received = res.output.strip().splitlines()
    assert notice.startswith("attnlab-grade regrade-request is now `attnlab regrade-request`"), res.output
    assert received.startswith(f"regrade request for {manual} of {A} received"), res.output
    res = _student("regrade-request", A, auto, "--reason", " ", "--exchange", exchange, ok=False)
    assert "say why" in res.output
    # what a student could drop into the inbox instead of a request: a link to a file only the
    # course can read, and a named pipe (would block a reader); both refused, nothing hangs
    box = Path(exchange, "attnlab", "regrade")
    os.symlink(root / "gradebook.db", box / "erin+link.json")
    os.mkfifo(box / "erin+fifo.json")
    monkeypatch.setenv("JUPYTERHUB_USER", "ta1")
    res = _run("regrade-queue", root, "--exchange", exchange, "--course-id", "attnlab")
    assert res.output.count("not readable as a regrade request") == 2, res.output
    assert "OSError" in res.output or "not a regular file" in res.output
    assert f"refused erin/{A} {manual}: item {manual} of {A} has no grade yet" in res.output, res.output
    assert f"[open] erin/{A} {auto}: my routing is right for ties" in res.output
    assert sorted(p.name for p in box.glob("*.json")) == ["erin+fifo.json", "erin+link.json"], \
        "requests are moved into the gradebook; what cannot be read is kept, never followed or deleted"
    assert os.path.islink(box / "erin+link.json")
    os.unlink(box / "erin+link.json")
    os.unlink(box / "erin+fifo.json")
    # the grader changes the grade: recorded who, when, old -> new, why; the request resolved
    bad = _run("regrade", root, "-a", A, "-s", "erin", "--item", auto, "--score", 999, "--reason", "r", ok=False)
    assert "outside" in bad.output
    _run("regrade", root, "-a", A, "-s", "erin", "--item", auto, "--score", 0, "--reason", "tie rule misread")
    hist = _run("history", root, "-s", "erin").output
    assert f"erin/{A}  {auto}: {before:g} → 0 by ta1 (tie rule misread)" in hist, hist
    assert _run("regrade-queue", root, "--exchange", exchange, "--course-id", "attnlab").output.count("[open]") == 0
    assert "[resolved]" in _run("regrade-queue", root, "--exchange", exchange, "--course-id", "attnlab",
                                "--all").output
    page = (root / "reports" / "regrade-queue.html").read_text()  # the graders' page
    assert "resolved" in page and "tie rule misread" in page and "my routing is right for ties" in page
    rows = _rows(root / "grades.csv")
    assert float(rows[(A, "erin")]["score"]) == pytest.approx(float(rows[(A, "alice")]["score"]) - before)
    # an edit made through nbgrader's own API (what formgrader does) is recorded too
    with Gradebook(db, "attnlab") as gb:
        gb.find_grade(manual, A, A, "erin").manual_score = 1.0
        gb.db.commit()
    assert f"{manual}: — → 1 by ta1 (edited in formgrader or another nbgrader tool)" in _run("history", root, "-a", A).output
    # release: feedback regenerated from the gradebook as it is now, with a notice of the changes
    from attnlab_grader.records.course import api_for
    api = api_for(root)
    first = api.release_feedback(A, "erin")
    assert first["success"], first
    released = list(Path(exchange, "attnlab", "feedback").glob("*.html"))
    page = max(released, key=lambda p: p.stat().st_mtime).read_text()
    assert NOTICE_ID not in page, "a first release has nothing to announce"
    assert "Due: 2026-12-01 00:00 UTC" in page and "on time" in page  # the student sees the due date
    with Gradebook(db, "attnlab") as gb:
        score_now = gb.find_submission(A, "erin").score
    assert f"{score_now:g} / " in page or f"Score: {score_now:g}" in page or f"{score_now}" in page
    _run("regrade", root, "-a", A, "-s", "erin", "--item", auto, "--score", before, "--reason", "ties are fine")
    assert api.release_feedback(A, "erin")["success"]
    page = max(Path(exchange, "attnlab", "feedback").glob("*.html"), key=lambda p: p.stat().st_mtime).read_text()
    assert NOTICE_ID in page and "ties are fine" in page and f"0 → {before:g}" in page


def test_autograde_reports_failure_when_it_could_not_grade(course, monkeypatch):
    """Formgrader's Autograde (nbgrader's API with formgrader's configuration): with the sandbox
    unavailable, the earlier scores stay but the run reports failure, with the reason."""
    root, db = course
    from nbgrader.api import Gradebook
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    from attnlab_grader.steps import sandbox_grade
    from attnlab_grader.records.course import CONFIG_FILE, load_config
    from attnlab_grader.sandbox import SandboxUnavailable
    shipped = PyFileConfigLoader(CONFIG_FILE.name, path=str(CONFIG_FILE.parent)).load_config()
    assert "fail_when_kept" not in shipped.AutogradeOutcome, "formgrader's config must keep the check on"

    def unavailable(*_args):
        raise SandboxUnavailable("no user namespaces here (simulated)")

    monkeypatch.setattr(sandbox_grade, "_sandbox", unavailable)
    cfg = load_config(root)
    del cfg.AutogradeOutcome["fail_when_kept"]  # as formgrader loads it (the pipeline turns it off)
    cfg.CourseDirectory.submitted_directory = "submitted"
    with Gradebook(db, "attnlab") as gb:
        before = gb.find_submission(A, "hana").code_score
    res = NbGraderAPI(config=cfg).autograde(A, "hana", force=True, create=True)
    assert not res["success"], res
    assert "not re-graded: the grader could not run" in res.get("log", "") + res.get("error", "")
    with Gradebook(db, "attnlab") as gb:
        assert gb.find_submission(A, "hana").code_score == before, "the earlier scores are kept"
    rep = json.loads((root / "reports" / A / "hana.json").read_text())
    assert rep["kept_previous"]


def test_lms_export_canvas_and_moodle(course, tmp_path):
    root, _ = course
    rows = _rows(root / "grades.csv")
    canvas = tmp_path / "canvas-roster.csv"
    canvas.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Routing (77)\n"
                      "    Points Possible,,,,,11\n"
                      "\"Test, Alice\",101,s1,alice,A,\n\"Test, Bob\",102,s2,bob,A,\n"
                      "\"Test, Dave\",104,s4,dave,A,\n\"Nobody, No\",105,s5,nobody,A,\n")
    res = _run("lms-export", root, "--format", "canvas", "--roster", canvas, "--column", f"{A}=Routing (77)",
               "--out", tmp_path / "canvas.csv", "-a", A, ok=False)
    assert res.exit_code == 1 and not (tmp_path / "canvas.csv").exists(), res.output  # grades left out: nothing
    assert "carol" in res.output and "not in the canvas roster" in res.output  # never guessed
    assert f"nobody/{A}: no row in the grades sheet" in res.output
    res = _run("lms-export", root, "--format", "canvas", "--roster", canvas, "--column", f"{A}=Routing (77)",
               "--out", tmp_path / "canvas.csv", "-a", A, "--allow-partial")
    assert "carol" in res.output and "not in the canvas roster" in res.output
    with open(tmp_path / "canvas.csv", newline="") as fh:
        out = list(csv.DictReader(fh))
    assert list(out[0]) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Routing (77)"]
    assert out[0]["Student"] == "Points Possible" and out[0]["Routing (77)"] == rows[(A, "alice")]["max_score"]
    by = {r["SIS Login ID"]: r for r in out[1:]}
    assert by["alice"]["Routing (77)"] == rows[(A, "alice")]["final_score"]
    assert by["dave"]["Routing (77)"] == rows[(A, "dave")]["final_score"] == "0.0"
    assert by["nobody"]["Routing (77)"] == ""
    moodle = tmp_path / "moodle-roster.csv"
    moodle.write_text("First name,Last name,ID number,Institution,Department,Email address\n"
                      "Alice,Test,1001,U,CS,alice@uni.example\nBob,Test,1002,U,CS,bob@uni.example\n")
    _run("lms-export", root, "--format", "moodle", "--roster", moodle, "--out", tmp_path / "moodle.csv",
         "-a", A, "--allow-partial")
    with open(tmp_path / "moodle.csv", newline="") as fh:
        out = {r["Email address"]: r for r in csv.DictReader(fh)}
    assert out["bob@uni.example"][f"Assignment: {A} (Real)"] == rows[(A, "bob")]["final_score"]
    wrong = tmp_path / "not-a-roster.csv"
    wrong.write_text("foo,bar\n1,2\n")
    res = _run("lms-export", root, "--format", "moodle", "--roster", wrong, ok=False)
    assert "is not a moodle grades export" in res.output and not (root / "lms-moodle.csv").exists()


def test_rubric_applied_and_grading_queue_split(course, tmp_path, monkeypatch):
    root, db = course
    from nbgrader.api import Gradebook

    from attnlab_grader.classroom.rubric import manual_items
    with Gradebook(db, "attnlab") as gb:
        (item, worth), = manual_items(gb, A).items()
        pending = sorted(s.student.id for s in gb.assignment_submissions(A) if s.needs_manual_grade)
    assert "carol" in pending
    rubric = tmp_path / "rubric.csv"
    rubric.write_text("item,key,points,comment\n"
                      f"{item},nope,1,x\n".replace(item, "not_an_item"))
    res = _run("rubric-define", root, "-a", A, "--file", rubric, ok=False)
    assert "'not_an_item' is not a manually graded item" in res.output and "nothing was changed" in res.output
    rubric.write_text("item,key,points,comment\n"
                      f"{item},full,{worth},Names the growing variance of the scores.\n"
                      f"{item},partial,1,Right idea but no reason given.\n"
                      f"{item},vague,-0.5,Say what grows with the dimension.\n")
    assert "partial (+1)" in _run("rubric-define", root, "-a", A, "--file", rubric).output
    # the queue: deterministic, every pending submission exactly once, stable when a grader joins
    first = _run("grading-queue", root, "-a", A, "--graders", "ta1,ta2").output
    assert first == _run("grading-queue", root, "-a", A, "--graders", "ta1,ta2").output
    shares = {ln.split(": ")[0]: [] if "nothing" in ln else ln.split(": ")[1].split(", ")
              for ln in first.splitlines()}
    assert sorted(sum(shares.values(), [])) == pending
    three = {ln.split(": ")[0]: [] if "nothing" in ln else ln.split(": ")[1].split(", ")
             for ln in _run("grading-queue", root, "-a", A, "--graders", "ta1,ta2,ta3").output.splitlines()}
    for g in ("ta1", "ta2"):
        assert set(three[g]) <= set(shares[g]), "adding a grader moved students between the others"
    # applying: points summed, reusable comments, in nbgrader's gradebook and the history
    monkeypatch.setenv("JUPYTERHUB_USER", "ta2")
    bad = _run("rubric-apply", root, "-a", A, "-s", "carol", "--item", item, "--keys", "partial,typo", ok=False)
    assert "unknown rubric key(s) typo" in bad.output
    _run("rubric-apply", root, "-a", A, "-s", "carol", "--item", item, "--keys", "partial,vague")
    with Gradebook(db, "attnlab") as gb:
        assert gb.find_grade(item, A, A, "carol").manual_score == 0.5
        assert "Right idea but no reason given. (+1)" in gb.find_comment(item, A, A, "carol").manual_comment
        assert not gb.find_submission(A, "carol").needs_manual_grade
    assert f"carol/{A}  {item}: — → 0.5 by ta2 (rubric: partial, vague)" in _run("history", root, "-s", "carol").output
    assert "carol" not in _run("grading-queue", root, "-a", A, "--graders", "ta1,ta2").output


def test_similarity_copied_pair_flagged_for_a_person_never_penalised(course):
    root, db = course
    from nbgrader.api import Gradebook
    with Gradebook(db, "attnlab") as gb:
        before = {s.student.id: (s.score, [nb.flagged for nb in s.notebooks]) for s in gb.assignment_submissions(A)}
    res = _run("similarity", root, "-a", A)
    pairs = json.loads((root / "reports" / "similarity" / f"{A}.json").read_text())["pairs"]
    found = {(p["a"], p["b"]): p for p in pairs}
    assert ("frank", "gina") in found, res.output  # renamed variables and comments do not hide it
    assert min(found[("frank", "gina")]["similarity_a"], found[("frank", "gina")]["similarity_b"]) >= 0.6
    assert not any("frank" in k and "gina" not in k for k in found), "frank's own code matched someone else"
    assert "frank ~ gina" in res.output and "no grade was changed" in res.output
    page = (root / "reports" / "similarity" / f"{A}.html").read_text()
    assert not (root / "reports" / A / "similarity.json").exists(), "reports/<A>/ holds one report per student"
    assert "frank" in page and "nothing here changes a grade" in page
    with Gradebook(db, "attnlab") as gb:
        assert {s.student.id: (s.score, [nb.flagged for nb in s.notebooks]) for s in gb.assignment_submissions(A)} == before
    assert "no graded submissions" in _run("similarity", root, "-a", "99_nope", ok=False).output


def test_class_mastery_page_rendered_from_submitted_records(course):
    root, _ = course
    res = _run("class-mastery", root, "--stale-days", 7)
    data = json.loads((root / "reports" / "class-mastery.json").read_text())
    assert data["students"] == len(STAMPS)
    lookup = data["skills"]["soft_lookup_weights"]
    assert lookup["practised"] == 2 and lookup["mastered"] == 1 and lookup["attempts"] == 5 and lookup["correct"] == 2
    assert data["skills"]["path_lengths"]["mastered"] == 0
    top = data["mistakes"][0]
    assert top[0] == "argmax_lookup" and top[2] == 3 and top[3] == 2  # 3 times, by 2 students
    assert top[1] == "you did a hard lookup (all weight on the best key)"  # the catalogue's words
    stale = dict(map(tuple, data["stale"]))
    assert stale["bob"] >= 19 and "alice" not in stale
    assert stale["carol"] is None  # graded, but no practice records came with the submission
    page = (root / "reports" / "class-mastery.html").read_text()
    assert "you did a hard lookup" in page and "bob: no practice for" in page
    assert "carol: no practice records submitted" in page
    assert f"{len(STAMPS)} students" in res.output


def test_gradebook_preparation_creates_every_row_concurrent_graders_would_race_for(tmp_path):
    """Before two grading runs share a new gradebook, its course rows exist: the course's own and
    nbgrader's default one, which nbgrader's preprocessors (SaveCells, SaveAutoGrades) open the
    gradebook with; two runs creating it at once collided on its primary key."""
    import inspect
    import sqlite3

    from nbgrader.api import Gradebook

    from attnlab_grader.classroom.gradebook_init import prepare
    db = tmp_path / "gradebook.db"
    prepare(f"sqlite:///{db}", ["ada", "bo"])
    with sqlite3.connect(db) as conn:
        courses = {r[0] for r in conn.execute("select id from course")}
        students = {r[0] for r in conn.execute("select id from student")}
    default = inspect.signature(Gradebook).parameters["course_id"].default
    assert courses == {"attnlab", default}
    assert students == {"ada", "bo"}
