"""The sanitize step that restores locked cells: silent for a test cell received as released,
nbgrader's warning for one a student edited (autograder/attnlab_grader/steps/overwrite_cells.py)."""
from __future__ import annotations

import copy
import logging

import nbformat
import pytest
from nbgrader.preprocessors import ClearHiddenTests, ComputeChecksums, OverwriteCells, SaveCells

from attnlab_grader.steps.overwrite_cells import QuietOverwriteCells, released_source
from attnlab_grader.tests import qa

A = "02_scaled_dot_product_attention"


@pytest.fixture()
def course(tmp_path):
    """A real gradebook holding set 02's source cells, and the release made from them, as
    ``generate_assignment`` makes it (checksums, SaveCells, ClearHiddenTests, checksums)."""
    from nbgrader.api import Gradebook
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(db) as gb:
        gb.update_or_create_assignment(A)
    resources = {"nbgrader": {"db_url": db, "assignment": A, "notebook": A}}
    nb = nbformat.read(str(qa.SOLUTIONS / A / f"{A}.ipynb"), as_version=4)
    for step in (ComputeChecksums(), SaveCells(), ClearHiddenTests(), ComputeChecksums()):
        nb, resources = step.preprocess(nb, resources)
    return nb, resources


def hidden_test_cells(nb) -> list:
    full = nbformat.read(str(qa.SOLUTIONS / A / f"{A}.ipynb"), as_version=4)
    ids = {c.metadata["nbgrader"]["grade_id"] for c in full.cells
           if "BEGIN HIDDEN TESTS" in c.source and c.metadata.get("nbgrader", {}).get("locked")}
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") in ids]


def run(step_class, nb, resources, caplog):
    step = step_class()
    step.log = logging.getLogger(f"overwrite-{step_class.__name__}")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=step.log.name):
        out, _ = step.preprocess(copy.deepcopy(nb), copy.deepcopy(resources))
    return out, [r.getMessage() for r in caplog.records]


def test_released_test_cells_are_restored_without_a_warning(course, caplog):
    release, resources = course
    assert len(hidden_test_cells(release)) >= 2, "set 02 has no locked cells with hidden tests: this proves nothing"
    # nbgrader's own step warns once per such cell of an honest submission (what formgrader showed)
    _, warned = run(OverwriteCells, release, resources, caplog)
    assert sum("checksum" in w for w in warned) == len(hidden_test_cells(release)), warned
    out, warned = run(QuietOverwriteCells, release, resources, caplog)
    assert not [w for w in warned if "has changed" in w], warned
    full = {c.metadata["nbgrader"]["grade_id"]: c.source
            for c in nbformat.read(str(qa.SOLUTIONS / A / f"{A}.ipynb"), as_version=4).cells
            if c.metadata.get("nbgrader", {}).get("locked")}
    for c in hidden_test_cells(out):  # what runs is the full cell, hidden tests included
        assert c.source == full[c.metadata["nbgrader"]["grade_id"]]
        assert "BEGIN HIDDEN TESTS" in c.source


def test_an_edited_test_cell_is_still_reported_and_restored(course, caplog):
    release, resources = course
    edited = hidden_test_cells(release)[0]
    gid = edited.metadata["nbgrader"]["grade_id"]
    edited.source = "assert True  # the student's own 'test'\n" + edited.source
    out, warned = run(QuietOverwriteCells, release, resources, caplog)
    assert [w for w in warned if "has changed" in w and gid in w], warned
    assert len([w for w in warned if "has changed" in w]) == 1, warned  # only that cell
    assert "the student's own" not in qa.cell(out, gid).source


def test_released_source_clears_only_the_hidden_region():
    text = "a = 1\n### BEGIN HIDDEN TESTS\nassert secret\n### END HIDDEN TESTS\nb = 2"
    assert released_source(text) == "a = 1\nb = 2"
    assert released_source("plain") == "plain"
    with pytest.raises(RuntimeError):
        released_source("### BEGIN HIDDEN TESTS\nno end")
