"""exercises/ is exactly what nbgrader generates from solutions/ (not stale, not hand-edited)."""
from __future__ import annotations

import json

import pytest

from autograder.course import EXERCISES, notebook_signature
from autograder.release_check import stale

from .conftest import GRADED


@pytest.mark.slow
@pytest.mark.xdist_group("grading")
def test_exercises_are_regenerated_from_solutions():
    problems = stale(GRADED)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("assignment", GRADED)
def test_release_hides_solutions_and_hidden_tests(assignment):
    text = (EXERCISES / assignment / f"{assignment}.ipynb").read_text()
    for marker in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", ".answer  # instructor copy"):
        assert marker not in text, f"{marker!r} leaked into exercises/{assignment}"
    assert not (EXERCISES / assignment / "grading.py").exists()
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
