"""exercises/ is exactly what nbgrader generates from solutions/ (not stale, not hand-edited)."""
from __future__ import annotations

import json

import pytest

from attnlab_grader.records.course import EXERCISES, notebook_signature
from attnlab_grader.classroom.release_check import compare

from attnlab_grader.tests.conftest import GRADED


@pytest.mark.slow
@pytest.mark.xdist_group("grading")
def test_exercises_are_regenerated_from_solutions(qa_generated):
    """exercises/ equals nbgrader's release of solutions/ (the QA course's, generated once)."""
    root, errors = qa_generated
    assert not errors, errors
    problems = compare(root / "release", GRADED)
    assert not problems, "\n".join(problems)


def test_stale_release_is_reported(tmp_path):
    """`check-release`'s comparison reports a committed notebook that differs from the generated one."""
    import shutil
    name = GRADED[0]
    shutil.copytree(EXERCISES / name, tmp_path / name)
    nb_path = tmp_path / name / f"{name}.ipynb"
    nb = json.loads(nb_path.read_text())
    nb["cells"][-1]["source"] = "changed"
    nb_path.write_text(json.dumps(nb))
    assert compare(tmp_path, [name]) and "differs from the generated version" in compare(tmp_path, [name])[0]


@pytest.mark.parametrize("assignment", GRADED)
def test_release_hides_solutions_and_hidden_tests(assignment):
    text = (EXERCISES / assignment / f"{assignment}.ipynb").read_text()
    for marker in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", ".answer  # instructor copy"):
        assert marker not in text, f"{marker!r} leaked into exercises/{assignment}"
    assert not (EXERCISES / assignment / "grading.py").exists()
    assert not list((EXERCISES / assignment).glob("grading_*.py")), "a part of the grading spec was released"
    nb = json.loads(text)
    assert all(c.get("outputs", []) == [] for c in nb["cells"])
    assert nb["metadata"]["kernelspec"]["name"] == "python3"


def test_hand_edit_is_detected(tmp_path):
    """The comparison used by the freshness test notices a one-character edit."""
    nb_path = next(EXERCISES.glob("*/*.ipynb"))
    nb = json.loads(nb_path.read_text())
    edited = tmp_path / "edited.ipynb"
    nb["cells"][0]["source"] = "x" + "".join(nb["cells"][0]["source"])
    edited.write_text(json.dumps(nb))
    assert notebook_signature(edited) != notebook_signature(nb_path)


@pytest.mark.slow
@pytest.mark.xdist_group("grading")
def test_release_command_output_matches_exercises(tmp_path):
    """The `release` command itself (copy + normalised JSON) reproduces a committed set."""
    from attnlab_grader.records.course import release
    name = "03_masks" if "03_masks" in GRADED else GRADED[0]
    release([name], dest=tmp_path)
    assert compare(tmp_path, [name]) == []
    assert (tmp_path / name / f"{name}.ipynb").read_bytes() == (EXERCISES / name / f"{name}.ipynb").read_bytes()
