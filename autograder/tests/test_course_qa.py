"""Course QA for every set with a grading.py: reference = 100%, untouched = 0, and each
wrong implementation of the set's WRONG library loses exactly the items it breaks.

All submissions of a set are graded in ONE pipeline run (one class folder)."""
from __future__ import annotations

import ast
import inspect

import pytest

from autograder import qa
from autograder.pipeline import grade

from .conftest import GRADED, needs_sandbox


def _class(assignment, root):
    qa.write(root, "reference", assignment, qa.reference_submission(assignment, "reference"))
    qa.write(root, "untouched", assignment, qa.release_notebook(assignment))
    cases = {}
    for name in qa.spec(assignment).wrong:
        student = next(f"wrong-{name}-{i}" for i in range(50) if qa.mistake_differs(assignment, f"wrong-{name}-{i}", name))
        qa.write(root, student, assignment, qa.wrong_submission(assignment, student, name))
        cases[name] = student
    return cases


@pytest.fixture(scope="module", params=GRADED)
def graded_class(request, tmp_path_factory):
    assignment = request.param
    root = tmp_path_factory.mktemp(f"qa-{assignment}")
    cases = _class(assignment, root)
    summary = grade(root, assignment, jobs=2, feedback=False, progress=False)
    return assignment, cases, {r["student"]: r for r in summary.reports}


@needs_sandbox
@pytest.mark.slow
@pytest.mark.xdist_group("grading")
def test_reference_untouched_and_wrong_implementations(graded_class):
    assignment, cases, reports = graded_class
    ref = reports["reference"]
    assert ref["status"] == "graded", ref
    bad = {g: i["message"] for g, i in ref["items"].items() if not i["ok"]}
    assert not bad, f"reference solution loses points: {bad}"
    assert ref["score"] == ref["max_score"] > 0
    untouched = reports["untouched"]
    assert untouched["status"] == "graded" and untouched["score"] == 0, untouched
    spec = qa.spec(assignment)
    problems = []
    for name, student in cases.items():
        rep = reports[student]
        failed = {g for g, i in rep["items"].items() if not i["ok"]}
        expected = set(spec.wrong[name].breaks)
        if failed != expected:
            problems.append(f"{name}: broke {sorted(failed)}, expected {sorted(expected)}: "
                            + "; ".join(rep["items"][g]["message"] for g in sorted(failed ^ expected) if g in rep["items"]))
    assert not problems, "\n".join(problems)


def _defs(assignment):
    nb = qa.release_notebook(assignment)
    out = {}
    for c in nb.cells:
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"):
            try:
                tree = ast.parse(c.source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    out[node.name] = node
    return out


@pytest.mark.parametrize("assignment", GRADED)
def test_signatures_match_reference(assignment):
    """Graded functions keep the name, signature and docstring of their attnlab.nn counterpart."""
    import attnlab.nn as ann
    defs = _defs(assignment)
    checked = 0
    for name, node in defs.items():
        ref = getattr(ann, name, None)
        if not inspect.isfunction(ref) or not isinstance(node, ast.FunctionDef):
            continue
        checked += 1
        assert ast.get_docstring(node, clean=True) == inspect.getdoc(ref), f"{assignment}: docstring of {name} differs from attnlab.nn"
        ref_params = list(inspect.signature(ref).parameters)
        a = node.args
        got = [x.arg for x in a.posonlyargs + a.args + ([a.vararg] if a.vararg else []) + a.kwonlyargs
               + ([a.kwarg] if a.kwarg else [])]
        assert got == ref_params, f"{assignment}: {name}{got} vs attnlab.nn {ref_params}"
    for cls in ("MultiHeadAttention",):
        if cls in defs:
            fwd = next(n for n in defs[cls].body if isinstance(n, ast.FunctionDef) and n.name == "forward")
            ref = getattr(ann, cls).forward
            checked += 1
            assert ast.get_docstring(fwd, clean=True) == inspect.getdoc(ref)
            got = [a.arg for a in fwd.args.args + fwd.args.kwonlyargs]
            assert got == list(inspect.signature(ref).parameters)
    assert checked, f"{assignment}: no graded function with an attnlab.nn counterpart found"


@pytest.mark.slow
@pytest.mark.xdist_group("grading")
@pytest.mark.parametrize("assignment", GRADED)
def test_source_notebook_passes_its_visible_tests(assignment, tmp_path, monkeypatch):
    """The instructor's source runs headless in a real kernel and every visible check passes."""
    import os
    import sys

    import nbformat
    from nbclient import NotebookClient

    from autograder.course import SOLUTIONS
    monkeypatch.setenv("ATTNLAB_HOME", str(tmp_path))
    monkeypatch.setenv("ATTNLAB_CI", "1")
    monkeypatch.setenv("ATTNLAB_LEARNER", "qa-instructor")
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    path = SOLUTIONS / assignment / f"{assignment}.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not any(o.output_type == "error" for o in outputs)
    assert sum("visible checks passed" in o.get("text", "") for o in outputs) >= 2
