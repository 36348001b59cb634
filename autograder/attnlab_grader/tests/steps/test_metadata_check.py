"""The grader's metadata check (schema compiled once) accepts and refuses exactly what nbgrader's
``CheckCellMetadata`` does, with the same exception and message, on every released notebook and on
corruptions of each kind nbgrader checks (schema, version, grade id, points, cell type, duplicates)."""
from __future__ import annotations

import copy

import pytest
from nbgrader.nbgraderformat import MetadataValidator
from nbgrader.preprocessors import CheckCellMetadata

from attnlab_grader.steps.metadata_check import CheckCellMetadataOnce, OnceMetadataValidator
from attnlab_grader.tests import qa
from attnlab_grader.tests.conftest import GRADED


def _outcome(validator, nb):
    try:
        validator.validate_nb(nb)
    except Exception as e:  # noqa: BLE001 - compared as (type, message)
        return type(e).__name__, str(e)
    return None


def _grade_cell(nb):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade"))


def _corrupt(nb, how):
    nb = copy.deepcopy(nb)
    meta = _grade_cell(nb).metadata["nbgrader"]
    if how == "points_text":
        meta["points"] = "two"
    elif how == "unknown_key":
        meta["hidden_from_grader"] = True
    elif how == "old_schema":
        meta["schema_version"] = 1
    elif how == "new_schema":
        meta["schema_version"] = 9
    elif how == "no_grade_id":
        del meta["grade_id"]
    elif how == "empty_grade_id":
        meta["grade_id"] = ""
    elif how == "no_points":
        del meta["points"]
    elif how == "grade_not_bool":
        meta["grade"] = "yes"
    elif how == "duplicate_id":
        other = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                     and c.metadata["nbgrader"] is not meta)
        other.metadata["nbgrader"]["grade_id"] = meta["grade_id"]
    elif how == "markdown_grade_only":
        cell = _grade_cell(nb)
        cell.cell_type = "markdown"
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
        meta["solution"] = False
    return nb


@pytest.mark.parametrize("assignment", GRADED)
def test_every_released_notebook_passes_both(assignment):
    nb = qa.release_notebook(assignment)
    assert _outcome(MetadataValidator(), nb) is None
    assert _outcome(OnceMetadataValidator(), nb) is None


@pytest.mark.parametrize("how", ["points_text", "unknown_key", "old_schema", "new_schema", "no_grade_id",
                                 "empty_grade_id", "no_points", "grade_not_bool", "duplicate_id",
                                 "markdown_grade_only"])
def test_each_corruption_is_refused_as_nbgrader_refuses_it(how):
    nb = _corrupt(qa.release_notebook("02_scaled_dot_product_attention"), how)
    theirs = _outcome(MetadataValidator(), nb)
    assert theirs is not None, f"nbgrader accepts the corruption {how}: the case tests nothing"
    assert _outcome(OnceMetadataValidator(), nb) == theirs
    # the grading step raises nbgrader's error with nbgrader's message
    with pytest.raises(Exception) as ours:
        CheckCellMetadataOnce().preprocess(copy.deepcopy(nb), {})
    with pytest.raises(Exception) as nbgraders:
        CheckCellMetadata().preprocess(copy.deepcopy(nb), {})
    assert (type(ours.value), str(ours.value)) == (type(nbgraders.value), str(nbgraders.value))
