"""Crafted submission folders, graded in ONE class run of set 02 next to honest classmates.

What they prove:
- only the notebook (and a valid ``timestamp.txt``) is read from a submission folder: links,
  pipes, folders where a file belongs, oversize or unreadable notebooks are refused with a reason
  in words, and nothing else reaches ``autograded/`` or ``feedback/``;
- a student id is exactly one folder (glob characters, brackets, spaces, unicode, dashes), with the
  same results for ``--jobs 1`` and ``--jobs 2``;
- submission text cannot drive a terminal or a spreadsheet; a deeply nested returned value or a
  broken by-hand answer fails its item only;
- SandboxGrade refuses a notebook VerifySubmission never saw; a failed re-grade keeps the previous
  result; the course kernel ``attnlab`` is accepted; ``grades.csv`` says ``manual_pending``;
  ``nbgrader export`` writes into the course; the grader's flag reaches the gradebook and
  ``python -m attnlab_grader clear-flag`` clears it in one action.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from attnlab_grader.tests import qa
from attnlab_grader.records.course import REPO
from attnlab_grader.classroom.pipeline import grade

from attnlab_grader.tests.conftest import needs_sandbox

A = "02_scaled_dot_product_attention"
NB = f"{A}.ipynb"
FUNCS = ("test_attention_scores", "test_softmax", "test_sdpa")
BY_HAND = ("test_scores_by_hand", "test_weights_by_hand", "test_output_by_hand")
FULL = 9.0
CAP = 64 * 1024  # bytes; the honest notebook is ~22 KB
SECRET = "TOP-SECRET-7f3a9c"
ESC = "\x1b[2J\x1b[31mPWNED\x1b]0;title\x07"
WRONG_SOFTMAX = "def softmax(x, dim=-1):\n    return x\n"

pytestmark = [needs_sandbox, pytest.mark.slow, pytest.mark.xdist_group("grading-2")]


def _nb(student):
    return qa.reference_submission(A, student)


def _answered(student):
    """The reference submission with the written (manually graded) answer filled in."""
    nb = _nb(student)
    qa.cell(nb, "why_sqrt_dk").source = "Dot products of d_k random components grow like sqrt(d_k)."
    return nb


def _wrong(student):
    nb = _nb(student)
    qa.cell(nb, "softmax").source = WRONG_SOFTMAX
    return nb


#: adversarial by-hand answers (nested powers, long digit strings, huge factors, a long chain, deep brackets),
#: each student next to honest classmates: {student: {answer cell: source}}
ADVERSARIAL = {
    "adv-powers": {"scores_by_hand": "scores = '((9^64)^64)^64'\n",
                   "weights_by_hand": "weights = [[((9**64)**64)**64, 1]]\n"},
    "adv-digits": {"scores_by_hand": "scores = [[" + "9" * 4000 + ", 1]]\n",
                   "weights_by_hand": "weights = '[[" + "9" * 4000 + ", 1]]'\n"},
    "adv-factors": {"scores_by_hand": "scores = [[" + " * ".join(["999999**51"] * 40) + "]]\n",
                    "weights_by_hand": "weights = '" + "+".join(["1"] * 600) + "'\n",
                    "output_by_hand": "output = [[" + "(" * 5000 + "1" + ")" * 5000 + "]]\n"},
}


def _folder(root, student) -> Path:
    return Path(root, "submitted", student, A)


# Folder names that collide under nbgrader's glob/strip rules (a wrong one next to an honest
# classmate whose grade must not change), then names that are only unusual: (id, honest?)
COLLIDING = [("star*", False), ("starlight", True), ("lee[2]", False), ("lee2 ", False), ("lee2", True)]
IDS = COLLIDING + [("-rf", True), ("=zoë", True), (".hidden", True)]


def _write_ids(root, ids=IDS):
    for student, honest in ids:
        qa.write(root, student, A, _nb(student) if honest else _wrong(student))


def _build(root, outside: Path):
    """Write the crafted class; returns {student: expected reason substring} for refused ones."""
    secret = outside / "shadow"
    secret.write_text(f"root:{SECRET}:19000:0:99999:7:::\n")
    qa.write(root, "honest", A, _answered("honest"))
    _write_ids(root)
    refused = {}

    def link(student, name, target, needle="symbolic link"):
        qa.write(root, student, A, _nb(student))
        os.symlink(target, _folder(root, student) / name)
        refused[student] = needle

    link("link-secret", "notes.txt", secret)
    link("link-gradebook", "gb.db", Path(root, "gradebook.db"))
    link("link-grading", "grading.py", Path(root, "source", A, "grading.py"))
    link("link-classmate", "answers.ipynb", _folder(root, "honest") / NB)
    link("link-stamp", "timestamp.txt", secret)
    # the notebook itself is a link to a classmate's
    _folder(root, "link-notebook").mkdir(parents=True)
    os.symlink(_folder(root, "honest") / NB, _folder(root, "link-notebook") / NB)
    refused["link-notebook"] = "symbolic link"
    # the assignment folder is a link to a classmate's folder
    Path(root, "submitted", "link-folder").mkdir(parents=True)
    os.symlink(_folder(root, "honest"), _folder(root, "link-folder"))
    refused["link-folder"] = "symbolic link"
    # a folder where the notebook belongs; a named pipe next to it
    (_folder(root, "dir-notebook") / NB).mkdir(parents=True)
    refused["dir-notebook"] = "is a folder"
    qa.write(root, "fifo", A, _nb("fifo"))
    os.mkfifo(_folder(root, "fifo") / "pipe")
    refused["fifo"] = "named pipe"
    # oversize: a huge output
    big = _nb("oversize")
    qa.cell(big, "softmax").outputs = [nbformat.v4.new_output("stream", name="stdout", text="x" * (2 * CAP))]
    qa.write(root, "oversize", A, big)
    refused["oversize"] = "over the 64.0 KB limit"
    # unreadable content
    qa.write(root, "nonutf8", A, "")
    (_folder(root, "nonutf8") / NB).write_bytes(nbformat.writes(_nb("nonutf8")).encode().replace(
        b"Exercise 02", b"Exercise \xff\xfe"))
    refused["nonutf8"] = "not UTF-8"
    qa.write(root, "nested", A, '{"cells": [], "metadata": {"x": ' + "[" * 5000 + "]" * 5000 + "}}")
    refused["nested"] = "nested more than"
    qa.write(root, "not-notebook", A, '{"hello": "world"}')
    refused["not-notebook"] = "not a Jupyter notebook"
    qa.write(root, "bad-stamp", A, _nb("bad-stamp"))
    (_folder(root, "bad-stamp") / "timestamp.txt").write_text("yesterday-ish")
    refused["bad-stamp"] = "timestamp.txt"
    # misnamed: one notebook (accepted with a note) / two notebooks (refused)
    _folder(root, "misnamed").mkdir(parents=True)
    nbformat.write(_nb("misnamed"), str(_folder(root, "misnamed") / "02_scaled_dot_product_attention (1).ipynb"))
    _folder(root, "twonames").mkdir(parents=True)
    for name in ("a.ipynb", "b.ipynb"):
        nbformat.write(_nb("twonames"), str(_folder(root, "twonames") / name))
    refused["twonames"] = f"expected the notebook '{NB}'"
    _folder(root, "empty").mkdir(parents=True)
    refused["empty"] = f"expected '{NB}'"
    # terminal escapes in metadata: a fake graded cell whose id carries them
    esc = _nb("escape")
    cell = nbformat.v4.new_code_cell("print(1)")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "points": 1,
                                 "grade_id": f"bonus{ESC}", "schema_version": 3}
    esc.cells.append(cell)
    qa.write(root, "escape", A, esc)
    refused["escape"] = "is not part of the assignment"
    # graded: the course kernel with a valid timestamp and an extra (ignored) regular file
    kern = _nb("kernel")
    kern.metadata.kernelspec = {"name": "attnlab", "display_name": "Python 3 (attnlab)", "language": "python"}
    qa.write(root, "kernel", A, kern)
    (_folder(root, "kernel") / "timestamp.txt").write_text("2026-11-20 14:03:00.000000 UTC\n")
    (_folder(root, "kernel") / "notes.txt").write_text("my extra notes")
    # graded: honest uploads -- a conda environment's Python kernel, a UTF-8 byte-order mark,
    # a data/checkpoint sub-folder beside the notebook
    conda = _nb("conda")
    conda.metadata.kernelspec = {"name": "conda-env-dl-py", "display_name": "Python [conda env:dl]",
                                 "language": "python"}
    path = qa.write(root, "conda", A, conda)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    (_folder(root, "conda") / "data" / "ckpt").mkdir(parents=True)
    (_folder(root, "conda") / "data" / "ckpt" / "model.pt").write_bytes(b"\0" * 64)
    # graded: a notebook written by a tool on Windows -- UTF-16 with CRLF line ends, no kernel named,
    # duplicated and invalid cell ids, an empty nbgrader entry on an added cell, a copy beside it
    tool = json.loads(nbformat.writes(_nb("tool")))
    tool["metadata"].pop("kernelspec", None)
    tool["metadata"].pop("language_info", None)
    for cell in tool["cells"]:
        cell["id"] = "copied cell"
    tool["cells"].append({"cell_type": "code", "id": "x", "metadata": {"nbgrader": {}}, "source": "y = 2"})
    path = qa.write(root, "tool", A, "{}")
    path.write_bytes(json.dumps(tool, indent=1).replace("\n", "\r\n").encode("utf-16"))
    (path.parent / f"{A}-Copy1.ipynb").write_text("{}")
    # graded: three broken items (a deep return value, a ragged and a mistyped by-hand answer)
    broken = _nb("broken")
    qa.cell(broken, "attention_scores").source = (
        "def attention_scores(q, k):\n    x = []\n    for _ in range(100000):\n        x = [x]\n    return x\n")
    qa.cell(broken, "scores_by_hand").source = "scores = [[0.5, 1.0], [1.5]]\n"
    qa.cell(broken, "weights_by_hand").source = "weights = [[0.1, 0.2], [0.3, 0.4]\n"
    qa.write(root, "broken", A, broken)
    for student, cells in ADVERSARIAL.items():  # by-hand text that cost minutes before the bounds
        adv = _nb(student)
        for cell_id, src in cells.items():
            qa.cell(adv, cell_id).source = src
        qa.write(root, student, A, adv)
    flagged = _answered("flagged")
    c = qa.cell(flagged, "softmax")
    c.source = "import json  # harmless, but outside the exercise's imports: flagged\n" + c.source
    qa.write(root, "flagged", A, flagged)
    return refused


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("intake")
    outside = tmp_path_factory.mktemp("outside")
    from attnlab_grader.records.course import generate
    generate(root, A)  # the links to source/ and the gradebook need them to exist
    refused = _build(root, outside)
    summary = grade(root, A, jobs=2, feedback=True, progress=False, item_timeout=5,
                    max_notebook_bytes=CAP)
    return root, summary, {r["student"]: r for r in summary.reports}, refused


def _rows(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_every_folder_graded_as_itself(graded):
    root, summary, reps, refused = graded
    students = {p.name for p in Path(root, "submitted").iterdir()}
    assert set(reps) == students
    for student, honest in IDS + [("honest", True)]:
        rep = reps[student]
        assert rep["status"] == "graded", (student, rep)
        if honest:
            assert rep["score"] == FULL, (student, rep["items"])
        else:  # the wrong softmax loses its items; its own by-hand numbers are right
            assert not rep["items"]["test_softmax"].ok, (student, rep["items"])
            assert all(rep["items"][g].ok for g in BY_HAND + ("test_attention_scores",)), (student, rep)
    rows = _rows(summary.csv)
    ids = [r["student_id"] for r in rows]
    assert len(ids) == len(set(ids)) == len(students)
    assert "'=zoë" in ids and "'-rf" in ids and "lee2 " in ids and "star*" in ids and "lee[2]" in ids
    assert (root / "feedback" / ".hidden" / A / f"{A}.html").exists()
    assert (root / "feedback" / "lee2 " / A / f"{A}.html").exists()


def test_jobs_one_gives_the_same_results(graded, tmp_path):
    _, _, reps, _ = graded
    import shutil

    from attnlab_grader.classroom.pipeline import grade_many
    root = graded[0]
    for name in ("source", "release"):  # the same generated assignment (no second generate)
        shutil.copytree(root / name, tmp_path / name)
    shutil.copy(root / "gradebook.db", tmp_path / "gradebook.db")
    _write_ids(tmp_path, COLLIDING)
    summary = grade_many(tmp_path, [A], jobs=1, feedback=False, progress=False, item_timeout=5,
                         generate=False)[A]
    one = {r["student"]: (r["status"], r["score"]) for r in summary.reports}
    assert one == {s: (reps[s]["status"], reps[s]["score"]) for s, _ in COLLIDING}


@pytest.mark.parametrize("student", ["link-secret", "link-gradebook", "link-grading", "link-classmate",
                                     "link-stamp", "link-notebook", "link-folder", "dir-notebook", "fifo",
                                     "oversize", "nonutf8", "nested", "not-notebook", "bad-stamp",
                                     "twonames", "empty", "escape"])
def test_refused_with_a_reason(graded, student):
    _, _, reps, refused = graded
    rep = reps[student]
    assert rep["status"] == "error", rep
    assert refused[student] in rep["reason"], rep["reason"]
    assert "traceback" not in rep["reason"].lower() and "error log" not in rep["reason"]


def test_only_the_notebook_is_read(graded):
    root, _, _, _ = graded
    for sub in ("autograded", "feedback", ".intake"):
        for path in Path(root, sub).rglob("*"):
            assert not path.is_symlink(), path
            if path.is_file():
                data = path.read_bytes()
                assert SECRET.encode() not in data, path
                assert b"SQLite format" not in data[:16], path
    for student in ("link-secret", "link-gradebook", "link-grading", "link-classmate", "fifo"):
        assert not (root / "feedback" / student).exists()
    # a graded student's folders hold the notebook (+ timestamp), never their extra files
    assert sorted(p.name for p in (root / "autograded" / "kernel" / A).iterdir()) == [NB, "timestamp.txt"]
    assert sorted(p.name for p in (root / "feedback" / "kernel" / A).iterdir()) == [f"{A}.html", "timestamp.txt"]


def test_oversize_reason_gives_the_size(graded):
    _, _, reps, _ = graded
    assert "KB" in reps["oversize"]["reason"] and "clear the outputs" in reps["oversize"]["reason"].lower()


def test_misnamed_single_notebook_is_graded_with_a_note(graded):
    _, summary, reps, _ = graded
    rep = reps["misnamed"]
    assert rep["status"] == "graded" and rep["score"] == FULL, rep
    assert "(1).ipynb" in rep["notes"][0] and NB in rep["notes"][0]
    assert "NOTE    misnamed" in summary.text()


def test_escape_sequences_never_reach_people(graded):
    root, summary, reps, _ = graded
    assert "\\x1b[2J" in reps["escape"]["reason"]
    texts = [summary.text(), Path(summary.csv).read_text(encoding="utf-8")]
    texts += [p.read_text(encoding="utf-8") for p in (root / "reports" / A).glob("*.json")]
    for text in texts:
        assert "\x1b" not in text and "\x07" not in text


def test_timestamp_and_course_kernel(graded):
    root, _, reps, _ = graded
    assert reps["kernel"]["status"] == "graded" and reps["kernel"]["score"] == FULL, reps["kernel"]
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "attnlab") as gb:
        assert gb.find_submission(A, "kernel").timestamp.year == 2026


def test_honest_uploads_are_graded_with_notes(graded):
    """Any Python kernel, a byte-order mark and a sub-folder: graded in full, the notes say what
    was ignored, and nothing of the sub-folder reaches autograded/ or feedback/."""
    root, _, reps, _ = graded
    rep = reps["conda"]
    assert rep["status"] == "graded" and rep["score"] == FULL, rep
    notes = " | ".join(rep.get("notes", []))
    assert "'data/'" in notes and "byte-order mark" in notes and "'conda-env-dl-py'" in notes, notes
    assert sorted(p.name for p in (root / "autograded" / "conda" / A).iterdir()) == [NB]


def test_a_tools_notebook_file_is_graded_with_notes(graded):
    """A notebook that differs only in how a tool wrote it (UTF-16, CRLF, no kernel named, bad or
    duplicated cell ids, empty nbgrader metadata, a copy beside it) is graded in full; the notes say
    what was normalized or ignored."""
    _, _, reps, _ = graded
    rep = reps["tool"]
    assert rep["status"] == "graded" and rep["score"] == FULL, rep
    notes = " | ".join(rep.get("notes", []))
    for needle in ("UTF-16", "no kernel", "cell id(s)", "empty nbgrader metadata", f"'{A}-Copy1.ipynb'"):
        assert needle in notes, (needle, notes)


def test_one_items_failure_stays_in_that_item(graded):
    _, _, reps, _ = graded
    rep = reps["broken"]
    assert rep["status"] == "graded", rep
    for gid, needle in [("test_attention_scores", "nested too deeply"), ("test_scores_by_hand", "same length"),
                        ("test_weights_by_hand", "not valid Python")]:
        assert not rep["items"][gid].ok and needle in rep["items"][gid].message, rep["items"][gid]
    # sdpa calls the broken attention_scores; everything else keeps its credit
    assert rep["items"]["test_softmax"].ok and rep["items"]["test_output_by_hand"].ok, rep["items"]


def test_adversarial_by_hand_answers_fail_their_items_in_words(graded):
    """Several adversarial by-hand answers in one class run: each such item fails with its reason in words
    (no exception's name, no "could not be checked"), the student's other items keep their credit, and every
    honest classmate is graded in full (``test_every_folder_graded_as_itself``)."""
    _, _, reps, _ = graded
    for student, cells in ADVERSARIAL.items():
        rep = reps[student]
        assert rep["status"] == "graded", (student, rep)
        for cell_id in cells:
            item = rep["items"][f"test_{cell_id}"]
            assert not item.ok, (student, cell_id, item)
            message = item.message
            assert "could not be checked" not in message and "OverflowError" not in message, message
            assert any(w in message for w in ("larger than 1.8e308", "more than 320 digits", "levels deep",
                                              "not valid Python", "could not be read", "Could not read")), message
        for gid in FUNCS + tuple(g for g in BY_HAND if g.removeprefix("test_") not in cells):
            assert rep["items"][gid].ok, (student, gid, rep["items"][gid])
    honest = [s for s, ok in IDS + [("honest", True), ("kernel", True), ("conda", True)] if ok]
    assert all(reps[s]["status"] == "graded" and reps[s]["score"] == FULL for s in honest), \
        {s: reps[s]["score"] for s in honest}


def test_grades_csv_says_manual_grading_is_pending(graded):
    root, summary, _, _ = graded
    rows = {r["student_id"]: r for r in _rows(summary.csv)}
    assert rows["honest"]["status"] == "manual_pending", rows["honest"]
    assert "manually graded" in rows["honest"]["reason"]
    assert rows["nested"]["status"] == "error" and rows["nested"]["score"] == ""
    from nbgrader.api import Gradebook

    from attnlab_grader.classroom.pipeline import export
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "attnlab") as gb:
        g = gb.find_grade("why_sqrt_dk", A, A, "honest")
        g.manual_score, g.needs_manual_grade = 2.0, False
        gb.db.commit()
    out = export(root, A, csv_path=root / "after-manual.csv")
    rows = {r["student_id"]: r for r in _rows(out)}
    assert rows["honest"]["status"] == "graded", rows["honest"]


def test_formgrader_flag_decides_flagged_in_the_csv(graded):
    """Flagging or unflagging in formgrader (nbgrader's own flag) is what grades.csv reports."""
    root, _, _, _ = graded
    from nbgrader.api import Gradebook

    from attnlab_grader.classroom.pipeline import export
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "attnlab") as gb:
        gb.find_submission_notebook(A, A, "-rf").flagged = True
        gb.db.commit()
    rows = {r["student_id"]: r for r in _rows(export(root, A, csv_path=root / "flag-check.csv"))}
    assert rows["'-rf"]["status"] == "flagged" and "flagged in formgrader" in rows["'-rf"]["reason"]
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "attnlab") as gb:
        gb.find_submission_notebook(A, A, "-rf").flagged = False
        gb.db.commit()


def test_nbgrader_export_writes_into_the_course(graded, tmp_path):
    root, _, _, _ = graded
    env = dict(os.environ, ATTNLAB_COURSE=str(root))
    before = (REPO / "grades.csv").exists()
    proc = subprocess.run([str(Path(sys.executable).with_name("nbgrader")), "export", "--assignment", A],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (REPO / "grades.csv").exists() == before
    rows = {r["student_id"]: r for r in _rows(root / "grades.csv")}
    assert rows["flagged"]["status"] == "flagged" and rows["flagged"]["flags"]
    assert rows["nested"]["status"] == "error" and "nested" in rows["nested"]["reason"]


def test_flag_reaches_formgrader_and_clear_flag_is_one_action(graded):
    root, _, reps, _ = graded
    from nbgrader.api import Gradebook
    db = f"sqlite:///{root / 'gradebook.db'}"
    assert reps["flagged"]["status"] == "flagged"
    with Gradebook(db, "attnlab") as gb:
        assert gb.find_submission_notebook(A, A, "flagged").flagged
        assert not gb.find_submission_notebook(A, A, "honest").flagged
        assert gb.find_submission(A, "flagged").code_score == 0
    from click.testing import CliRunner

    from attnlab_grader.classroom.main import cli
    proc = CliRunner().invoke(cli, ["clear-flag", str(root), "-a", A, "-s", "flagged"])
    assert proc.exit_code == 0, proc.output
    assert "credit restored" in proc.output
    with Gradebook(db, "attnlab") as gb:
        assert not gb.find_submission_notebook(A, A, "flagged").flagged
        assert gb.find_submission(A, "flagged").code_score == FULL
    rep = json.loads((root / "reports" / A / "flagged.json").read_text())
    assert rep["status"] == "graded" and rep["score"] == FULL and rep["cleared_flags"]
    row = {r["student_id"]: r for r in _rows(root / "grades.csv")}["flagged"]
    assert row["status"] == "manual_pending" and float(row["autograded_score"]) == FULL
    again = CliRunner().invoke(cli, ["clear-flag", str(root), "-a", A, "-s", "honest"])
    assert again.exit_code == 1 and "not flagged" in again.output


def test_failed_regrade_keeps_the_previous_result(graded, monkeypatch):
    root, _, _, _ = graded
    from nbgrader.api import Gradebook

    from attnlab_grader.steps import sandbox_grade
    from attnlab_grader.records.course import api_for
    from attnlab_grader.sandbox import SandboxUnavailable

    def unavailable(*_args):
        raise SandboxUnavailable("no user namespaces here (simulated)")

    monkeypatch.setattr(sandbox_grade, "_sandbox", unavailable)
    api = api_for(root)
    res = api.autograde(A, "starlight", force=True, create=True)
    assert res["success"], res
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "attnlab") as gb:
        assert gb.find_submission(A, "starlight").code_score == FULL
    sub = api.get_submission(A, "starlight")  # what formgrader shows (was 0/0)
    assert sub["autograded"] and sub["max_code_score"] == FULL and sub["code_score"] == FULL, sub
    rep = json.loads((root / "reports" / A / "starlight.json").read_text())
    assert "simulated" in rep["kept_previous"]["why"]  # the reason in words, as a field
    # without a previous result it is an error that says why (not 0 points in silence)
    (root / "reports" / A / "lee2.json").unlink()
    res = api.autograde(A, "lee2", force=True, create=True)
    assert not res["success"]
    rep = json.loads((root / "reports" / A / "lee2.json").read_text())
    assert rep["status"] == "error" and "grader could not run" in rep["reason"]


def test_formgrader_path_refuses_links_too(graded):
    """nbgrader reading submitted/ itself (formgrader's Autograde button): VerifySubmission
    refuses the folder and nbgrader's failure handling removes what it had copied."""
    root, _, _, _ = graded
    from attnlab_grader.records.course import load_config
    from nbgrader.apps import NbGraderAPI
    cfg = load_config(root)
    cfg.CourseDirectory.submitted_directory = "submitted"
    res = NbGraderAPI(config=cfg).autograde(A, "link-secret", force=True, create=True)
    assert not res["success"]
    assert not (root / "autograded" / "link-secret").exists() or not any(
        SECRET.encode() in p.read_bytes() for p in (root / "autograded" / "link-secret").rglob("*") if p.is_file())
    rep = json.loads((root / "reports" / A / "link-secret.json").read_text())
    assert "symbolic link" in rep["reason"]


def test_sandbox_grade_fails_closed(graded):
    """A notebook VerifySubmission never saw is refused, not graded as "not tampered"."""
    from traitlets.config import Config

    from attnlab_grader.steps.sandbox_grade import SandboxGrade, SubmissionError
    cfg = Config()
    cfg.CourseDirectory.root = str(graded[0])
    resources = {"nbgrader": {"student": "nobody", "assignment": A, "notebook": A}}
    with pytest.raises(SubmissionError, match="not checked by VerifySubmission"):
        SandboxGrade(config=cfg).preprocess(_nb("nobody"), resources)
