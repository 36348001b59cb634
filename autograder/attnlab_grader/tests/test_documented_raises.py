"""Every ``Raises:`` that a graded cell's docstring shows a student is one the grader tries.

Reads the released exercise notebooks (what students get) and executes nothing: each function or
class defined in a student's answer cell whose docstring has a ``Raises:`` section must be listed in
:data:`TRIED`, with the QA case (``solutions/<set>/wrong/<name>.py``) that drops exactly that check and
must lose the item. The QA test (test_course_qa.py) and the stability audit prove the case is caught
on every draw; this test proves no promise is left without such a case. An exercise that does not ask
for the library's checks takes its docstring ``, without Raises`` (scripts/build_solutions.py), so the
promise is not shown at all."""
from __future__ import annotations

import ast

import nbformat
import pytest

from attnlab_grader.judging.course_files import REPO
from attnlab_grader.tests import qa
from attnlab_grader.tests.conftest import GRADED

#: (set, function or class shown with ``Raises:``) -> the QA case that leaves out that check.
TRIED = {
    ("01_routing_and_soft_lookup", "apply_temperature"): "temperature_no_error",
    ("01_routing_and_soft_lookup", "soft_lookup"): "soft_lookup_temperature_not_checked",
    ("04_positional_encoding", "sinusoidal_encoding"): "pe_checks_only_odd_d_model",
    ("05_multi_head_attention", "MultiHeadAttention"): "mha_heads_not_checked",
    ("06_transformer_block", "FeedForward"): "ffn_activation_not_checked",
    ("06_transformer_block", "count_parameters"): "count_no_type_check",
    ("07_encoder_decoder", "padding_mask"): "pad_no_validation",
    ("10_costs_and_limits", "count_parameters"): "count_no_type_check",
}


def _shown_raises(assignment: str) -> set[tuple[str, str]]:
    """``(assignment, name)`` of each top-level def/class of an answer cell whose docstring (or one of
    its methods') has a ``Raises:`` section, in the released notebook."""
    path = REPO / "exercises" / assignment / f"{assignment}.ipynb"
    nb = nbformat.read(path, as_version=4)
    found = set()
    for cell in nb.cells:
        if cell.cell_type != "code" or not cell.metadata.get("nbgrader", {}).get("solution"):
            continue
        for node in ast.parse(cell.source).body:
            if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                continue
            docs = [ast.get_docstring(n) or "" for n in ast.walk(node)
                    if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
            if any(line.strip() == "Raises:" for d in docs for line in d.splitlines()):
                found.add((assignment, node.name))
    return found


def test_every_shown_raises_has_a_qa_case_that_drops_it():
    shown = set().union(*(_shown_raises(a) for a in GRADED))
    assert shown == set(TRIED), (
        f"shown but not listed (add a trial that calls it with each documented bad argument and a wrong/ case "
        f"without the check, or take the docstring ', without Raises'): {sorted(shown - set(TRIED))}; "
        f"listed but no longer shown: {sorted(set(TRIED) - shown)}")


@pytest.mark.parametrize("key", sorted(TRIED), ids=lambda k: f"{k[0]}:{k[1]}")
def test_the_case_that_drops_the_check_must_lose_points(key):
    assignment, _ = key
    case = qa.spec(assignment).wrong.get(TRIED[key])
    assert case is not None, f"solutions/{assignment}/wrong/{TRIED[key]}.py is missing"
    assert case.breaks, f"{TRIED[key]} must name the items it loses (# breaks:)"
