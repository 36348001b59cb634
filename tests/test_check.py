"""``attnlab check``: a learner grades their own copy of an exercise notebook with the grader's judgement.

Fast tests (no grading): the instructor's setting (``c.SelfCheck``), finding the exercise set, bad
input in one sentence, every written answer's model answer and rubric readable.  Slow tests (each
runs the real grading pipeline once on set 01, about 10 s): a blank copy scores 0 with a reason per
item; a reference copy, checked by an ordinary (non-root) user from a private folder outside the
clone, scores full marks and shows the model answer of an attempted written answer; realistic wrong
work names its mistakes and a crashing cell loses only its item; a damaged file is refused with the
reason; without the grading specs (a graded class) only the visible checks run and nothing hidden is
shown.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import nbformat
import pytest

from attnlab.check import (CheckError, SelfCheckMode, _model_answer, find_assignment, load_policy,
                           run_check)
from attnlab_grader.records.course import EXERCISES, REPO, solutions_dir
from attnlab_grader.judging.spec import load_spec
from attnlab_grader.tests import qa, rootless
from attnlab_grader.tests.conftest import needs_sandbox

SOLUTIONS = solutions_dir()
A = "01_routing_and_soft_lookup"
WRITTEN = "agreement_trap"
BLANK = EXERCISES / A / f"{A}.ipynb"
ATTEMPT = "The verb is \"are\", because its subject is \"keys\"; a recency model says \"is\"."


def _uid() -> str:
    return f"chk-{uuid.uuid4().hex[:8]}"


def _points_line(text: str) -> str:
    last = text.rstrip().splitlines()[-1]
    assert last.endswith(" points") and " / " in last, f"last line is not 'X / Y points': {last!r}"
    assert sum(ln.endswith(" points") and " / " in ln and ln.count(" ") == 3 for ln in text.splitlines()) == 1
    return last


def _write(nb, folder: Path, name: str = f"{A}.ipynb") -> Path:
    path = folder / name
    nbformat.write(nb, str(path))
    return path


def _answer_written(nb):
    cell = qa.cell(nb, WRITTEN)
    cell.source = cell.source.replace("YOUR ANSWER HERE", ATTEMPT)
    return nb


# ------------------------------------------------------------------ fast: no grading


def test_policy_is_read_from_the_deployment_config_per_set(tmp_path):
    """The instructor's setting: a default and per-set modes, later config folders winning; a
    self-paced clone (no setting) gets the full check."""
    low, high = tmp_path / "system", tmp_path / "env"
    low.mkdir()
    high.mkdir()
    (low / "nbgrader_config.py").write_text('c = get_config()\nc.SelfCheck.default = "off"\n')
    (high / "nbgrader_config.py").write_text('c = get_config()\nc.SelfCheck.default = "visible"\n'
                                              'c.SelfCheck.assignments = {"03_masks": "off"}\n')
    policy = load_policy([str(low), str(high)])
    assert policy.mode_for(A) is SelfCheckMode.VISIBLE
    assert policy.mode_for("03_masks") is SelfCheckMode.OFF
    assert load_policy([str(low)]).mode_for(A) is SelfCheckMode.OFF
    assert load_policy([str(tmp_path / "nothing-here")]).mode_for(A) is SelfCheckMode.FULL
    (high / "nbgrader_config.py").write_text('c = get_config()\nc.SelfCheck.default = "sometimes"\n')
    with pytest.raises(CheckError, match="sometimes"):
        load_policy([str(high)])


def test_switched_off_set_is_not_graded_and_says_so(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text('c = get_config()\nc.SelfCheck.assignments = {"%s": "off"}\n' % A)
    copy = shutil.copy(BLANK, tmp_path / "mine.ipynb")
    rep = run_check(copy, policy=load_policy([str(tmp_path)]))
    assert rep.mode is SelfCheckMode.OFF and rep.items == [] and rep.written == []
    assert "switched off" in rep.text() and "points" not in rep.text()


def test_the_set_is_found_from_the_name_or_the_setup_cell(tmp_path):
    assert find_assignment(tmp_path / f"{A} (1).ipynb") == A
    renamed = shutil.copy(BLANK, tmp_path / "my work.ipynb")
    assert find_assignment(renamed) == A
    with_bom = tmp_path / "saved by another editor.ipynb"
    with_bom.write_bytes(b"\xef\xbb\xbf" + BLANK.read_bytes())  # a byte-order mark, as the grader accepts
    assert find_assignment(with_bom) == A
    (tmp_path / "other.ipynb").write_text("{}")
    with pytest.raises(CheckError, match="pass --assignment"):
        find_assignment(tmp_path / "other.ipynb")
    with pytest.raises(CheckError, match="not an exercise set"):
        find_assignment(renamed, "99_nothing")


def test_cli_bad_input_is_one_sentence_not_a_traceback(tmp_path):
    for arg, words in ((str(tmp_path / "missing.ipynb"), "there is no file"),
                       (str(tmp_path), "is a folder")):
        res = subprocess.run([sys.executable, "-m", "attnlab.cli", "check", arg], capture_output=True, text=True,
                             timeout=120)
        assert res.returncode == 2 and words in res.stderr and "Traceback" not in res.stderr, res.stderr


@pytest.mark.parametrize("path", sorted(SOLUTIONS.glob("*/*.pct.py")), ids=lambda p: p.parent.name)
def test_every_written_answer_has_a_model_answer_and_a_rubric(path):
    name = path.parent.name
    nb = json.loads((SOLUTIONS / name / f"{name}.ipynb").read_text(encoding="utf-8"))
    auto = {c.grade_id for c in load_spec(SOLUTIONS / name / "grading.py").checks}
    written = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")
               and c["metadata"]["nbgrader"].get("solution") and c["metadata"]["nbgrader"]["grade_id"] not in auto]
    for cell in written:
        answer, rubric = _model_answer("".join(cell["source"]))
        assert len(answer) > 200 and "BEGIN SOLUTION" not in answer and "Rubric" not in answer, answer[:200]
        assert rubric and "point" in rubric, f"{name}/{cell['metadata']['nbgrader']['grade_id']} has no rubric"


def test_the_release_read_without_the_clone_has_the_graded_cells_students_received(monkeypatch, tmp_path):
    """An install without the clone's exercises/ reads the release from the source notebook, hidden tests
    cleared: the graded cells' types, nbgrader flags and locked sources are those of exercises/."""
    from attnlab_grader.judging import course_files
    from attnlab_grader.judging.structure import compare_with_release, nbgrader_flags, nbgrader_meta
    monkeypatch.setattr(course_files, "EXERCISES", tmp_path / "no-exercises")
    for a in course_files.assignments():
        shipped = nbformat.read(str(EXERCISES / a / f"{a}.ipynb"), as_version=4)
        rebuilt = course_files.released_notebook(a)

        def graded(nb):
            return {nbgrader_meta(c)["grade_id"]: (c.cell_type, nbgrader_flags(nbgrader_meta(c)),
                                                   c.source if nbgrader_meta(c).get("locked") else None)
                    for c in nb.cells if nbgrader_meta(c).get("grade_id")}
        assert graded(rebuilt) == graded(shipped), a
        assert compare_with_release(shipped, rebuilt) == {}, a
    assert "HIDDEN TESTS" not in course_files.clear_hidden_tests("a\n### BEGIN HIDDEN TESTS\nb\n### END HIDDEN TESTS\n")
    with pytest.raises(ValueError, match="not closed"):
        course_files.clear_hidden_tests("### BEGIN HIDDEN TESTS\nb\n")


@needs_sandbox
def test_a_duplicated_or_deleted_graded_cell_is_refused_with_the_reason_before_anything_runs(tmp_path):
    """As in grading, a notebook whose graded cells do not match the release is not judged: every item says
    so, and the note says what to fix (fast: nothing reaches the sandbox)."""
    nb = qa.release_notebook(A)
    dup = nbformat.from_dict(json.loads(json.dumps(qa.cell(nb, "test_soft_lookup"))))
    dup.id = "a-copy"
    nb.cells.append(dup)
    rep = run_check(_write(nb, tmp_path), learner=_uid())
    assert rep.mode is SelfCheckMode.FULL and len(rep.items) == 7 and rep.score == 0, rep.text()
    assert all(i.message.startswith("not checked") and i.status == "failed" for i in rep.items), rep.text()
    assert any("'test_soft_lookup' appears 2 times" in n for n in rep.notes), rep.notes
    nb = qa.release_notebook(A)
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "test_path_lengths"]
    rep = run_check(_write(nb, tmp_path, "deleted.ipynb"), assignment=A, learner=_uid())
    assert any("'test_path_lengths'" in n and "were deleted" in n for n in rep.notes), rep.notes
    assert "Traceback" not in rep.text()


# ------------------------------------------------------------------ slow: the real grading pipeline


@pytest.mark.slow
@needs_sandbox
@pytest.mark.xdist_group("grading-2")
def test_blank_set_scores_zero_with_a_reason_per_item_and_a_damaged_file_is_refused(tmp_path):
    copy = Path(shutil.copy(BLANK, tmp_path / f"{A}.ipynb"))
    before = hashlib.sha256(copy.read_bytes()).hexdigest()
    rep = run_check(copy, learner=_uid())
    text = rep.text()
    assert rep.mode is SelfCheckMode.FULL and len(rep.items) == 7, text
    assert all(i.status == "not attempted" and i.points == 0 and "stub" in i.message for i in rep.items), text
    assert _points_line(text) == f"0 / {int(rep.max_score)} points" and rep.max_score == 9
    assert [w.grade_id for w in rep.written] == [WRITTEN] and not rep.written[0].attempted
    assert rep.written[0].model_answer is None and "Model answer" not in text
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == before, "the check wrote to the learner's notebook"

    broken = tmp_path / f"{A} (2).ipynb"
    broken.write_text('{"cells": [ {"cell_type": "code"', encoding="utf-8")
    rep = run_check(broken, learner=_uid())
    text = rep.text()
    assert "Traceback" not in text and len(rep.items) == 7 and rep.score == 0
    assert all(i.message.startswith("not checked") for i in rep.items), text
    assert any("not valid notebook JSON" in n and "line 1" in n for n in rep.notes), text


@pytest.mark.slow
@needs_sandbox
@pytest.mark.xdist_group("grading-2")
def test_a_test_cell_without_answer_cells_of_its_own_is_not_attempted_while_what_it_runs_is_a_stub(tmp_path):
    """Exercise 09's training run exercises get_batch and train_step, written in earlier cells: on a blank
    copy it says which stub is left, like every other item, not the NotImplementedError the stub raised."""
    blank = Path(shutil.copy(EXERCISES / "09_capstone" / "09_capstone.ipynb", tmp_path / "mine.ipynb"))
    rep = run_check(blank, learner=_uid())
    run = next(i for i in rep.items if i.grade_id == "test_training_run")
    assert run.status == "not attempted" and "train_step" in run.message and "stub" in run.message, rep.text()
    assert all(i.status == "not attempted" for i in rep.items), rep.text()


@pytest.mark.slow
@needs_sandbox
@pytest.mark.xdist_group("grading-2")
def test_wrong_work_names_its_mistakes_and_a_crashing_cell_loses_only_its_item(tmp_path):
    base = _uid()  # a learner whose variant makes the by-hand mistake give different numbers
    learner = next(f"{base}-{i}" for i in range(50) if qa.mistake_differs(A, f"{base}-{i}", "by_hand_weights_without_exp"))
    sp = qa.spec(A)
    nb = qa.reference_submission(A, learner)
    for case in ("soft_lookup_scaled_by_sqrt_dk", "by_hand_weights_without_exp"):
        nb = qa.apply_case(nb, sp.wrong[case], A, learner)
    qa.cell(nb, "hard_lookup").source = "raise RuntimeError('half-written cell')\n"
    rep = run_check(_write(nb, tmp_path), learner=learner)
    text = rep.text()
    items = {i.grade_id: i for i in rep.items}
    assert sp.wrong["soft_lookup_scaled_by_sqrt_dk"].mistake in items["test_soft_lookup"].mistakes, text
    assert "known mistake" in items["test_soft_lookup"].message
    assert items["test_weights_by_hand"].status == "failed" and items["test_weights_by_hand"].mistakes, text
    assert "RuntimeError" in items["test_hard_lookup"].message and "half-written" in items["test_hard_lookup"].message
    passed = {"test_output_by_hand", "test_paths_by_hand", "test_path_lengths", "test_apply_temperature"}
    assert {g for g, i in items.items() if i.status == "passed"} == passed, text
    assert _points_line(text) == f"{int(rep.score)} / 9 points" and rep.score == 5, text
    assert "Traceback" not in text


@pytest.mark.slow
@needs_sandbox
@pytest.mark.xdist_group("grading-2")
@pytest.mark.skipif(os.geteuid() == 0 and rootless.why_not() is not None, reason=f"cannot switch users: {rootless.why_not()}")
def test_reference_copy_outside_the_clone_as_an_ordinary_user_gets_full_marks_and_the_model_answer():
    """The learner (non-root when the suite runs as root) runs `attnlab check` on a copy in their own
    0700 folder outside the clone; the clone is readable only, the notebook is left as it was."""
    learner = _uid()
    user = rootless.make_user() if os.geteuid() == 0 else None
    home = Path(tempfile.mkdtemp(prefix="attnlab-learner-"))
    try:
        nb_path = _write(_answer_written(qa.reference_submission(A, learner)), home, "my copy.ipynb")
        before = hashlib.sha256(nb_path.read_bytes()).hexdigest()
        argv = [sys.executable, "-m", "attnlab.cli", "--learner", learner, "check", str(nb_path)]
        env = {"ATTNLAB_HOME": str(home / ".attnlab"), "TMPDIR": str(home)}
        if user:
            import pwd
            pw = pwd.getpwnam(user)
            for p in [home, *home.rglob("*")]:
                os.lchown(p, pw.pw_uid, pw.pw_gid)
            os.chmod(home, 0o700)
            res = rootless.run_as(user, argv, expose=[str(REPO), str(home), *rootless.python_paths()],
                                  env=env, cwd=str(home), timeout=300)
        else:
            res = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=home, env={**os.environ, **env})
        text = res.stdout
        assert res.returncode == 0, res.stdout + res.stderr
        assert _points_line(text) == "9 / 9 points", text
        assert text.count("✔") == 7 and "✘" not in text
        assert "Model answer: The blank takes \"are\"" in text and "Rubric: 1 point" in text, text
        assert hashlib.sha256(nb_path.read_bytes()).hexdigest() == before
        assert sorted(p.name for p in home.iterdir()) == [".attnlab", "my copy.ipynb"] or \
            sorted(p.name for p in home.iterdir()) == ["my copy.ipynb"], "the check left files behind"
    finally:
        shutil.rmtree(home, ignore_errors=True)
        if user:
            rootless.remove_user(user)


@pytest.mark.slow
@pytest.mark.xdist_group("grading-2")
def test_without_the_grading_specs_only_visible_checks_run_and_nothing_hidden_is_shown(tmp_path):
    """A graded class's environment has no solutions/: the check says so, runs the notebook's own
    test cells, judges no points and shows no model answer even for an attempted written answer."""
    learner = _uid()
    nb = _answer_written(qa.reference_submission(A, learner))
    qa.cell(nb, "hard_lookup").source = qa.cell(qa.release_notebook(A), "hard_lookup").source  # not attempted
    path = _write(nb, tmp_path)
    empty = tmp_path / "no-solutions"
    empty.mkdir()
    env = {**os.environ, "ATTNLAB_SOLUTIONS": str(empty), "ATTNLAB_HOME": str(tmp_path / "home")}
    res = subprocess.run([sys.executable, "-m", "attnlab.cli", "--learner", learner, "check", str(path)],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    text = res.stdout
    assert res.returncode == 0, text + res.stderr
    assert "no grading spec" in text and "only the visible checks ran" in text, text
    assert _points_line(text) == "0 / 0 points"
    lines = {ln.split()[1]: ln for ln in text.splitlines() if ln[:1] in "✔✘–" and len(ln.split()) > 1}
    assert lines["test_hard_lookup"].startswith("–") and "not attempted" in lines["test_hard_lookup"], text
    assert all(lines[g].startswith("✔") for g in ("test_soft_lookup", "test_path_lengths", "test_weights_by_hand"))
    assert "answered; your instructor grades it" in text
    model = _model_answer("".join(qa.cell(nbformat.read(str(SOLUTIONS / A / f"{A}.ipynb"), 4), WRITTEN).source))[0]
    assert model[:60] not in text and "Rubric" not in text


def test_the_hub_recipe_limits_a_class_to_the_visible_checks(tmp_path):
    """The class deployment's system-wide nbgrader config (installed as <env>/etc/jupyter/nbgrader_config.py)
    sets the visible mode for every set."""
    shutil.copy(REPO / "deploy" / "jupyterhub" / "nbgrader_config_global.py", tmp_path / "nbgrader_config.py")
    policy = load_policy([str(tmp_path)])
    assert {policy.mode_for(a) for a in ("01_routing_and_soft_lookup", "09_capstone")} == {SelfCheckMode.VISIBLE}


def test_from_a_notebook_the_running_notebook_is_found_or_asked_for(tmp_path, monkeypatch, capsys):
    from attnlab.check import _running_notebook, check
    nb = shutil.copy(BLANK, tmp_path / "mine.ipynb")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JPY_SESSION_NAME", "some/folder/mine.ipynb")  # server-relative; the kernel runs here
    assert _running_notebook() == str(Path(nb).resolve())
    monkeypatch.delenv("JPY_SESSION_NAME")
    check()
    assert "cannot tell which notebook this is" in capsys.readouterr().out
    check(tmp_path / "missing.ipynb")
    out = capsys.readouterr().out
    assert "there is no file" in out and "Traceback" not in out


def test_a_written_answer_counts_as_attempted_only_when_it_is_more_than_the_stub_or_the_question():
    from attnlab.check import _attempted
    question = "**Why?** In three sentences: ...\n\nYOUR ANSWER HERE"
    assert not _attempted(question, question, "YOUR ANSWER HERE")
    assert not _attempted("**Why?** In three sentences: ...\n\n", question, "YOUR ANSWER HERE")
    assert not _attempted("   ", None, "YOUR ANSWER HERE")
    assert not _attempted("# YOUR CODE HERE\nraise NotImplementedError()", None, "YOUR ANSWER HERE",
                          "# YOUR CODE HERE\nraise NotImplementedError()")
    assert _attempted("**Why?** In three sentences: ...\n\nBecause the variance grows.", question, "YOUR ANSWER HERE")


@pytest.mark.slow
def test_visible_check_reports_and_runs_as_the_learner_given_on_the_command_line(tmp_path):
    """`attnlab check --visible --learner X`: the report names X, and the notebook's kernel draws and judges
    the by-hand numbers for X (its check cells say whose numbers they are), not for the OS user."""
    learner = _uid()
    path = _write(qa.reference_submission(A, learner), tmp_path)
    res = subprocess.run([sys.executable, "-m", "attnlab.cli", "check", "--visible", "--learner", learner, "--json",
                          str(path)], capture_output=True, text=True, timeout=600,
                         env={k: v for k, v in os.environ.items() if k != "ATTNLAB_LEARNER"})
    assert res.returncode == 0, res.stderr[-2000:]
    report = json.loads(res.stdout)
    assert report["learner"] == learner and report["mode"] == "visible", res.stdout[:500]
    by_hand = [i for i in report["items"] if i["grade_id"].endswith("_by_hand")]
    assert by_hand and all(f"learner id '{learner}'" in i["message"] for i in by_hand), by_hand
