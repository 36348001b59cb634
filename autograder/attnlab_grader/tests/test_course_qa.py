"""Course QA for every set with a grading.py: reference = 100%, untouched = 0, and each
wrong implementation of the set's WRONG library loses exactly the items it breaks.

All sets' QA classes are graded in ONE pipeline session (one course folder, the sandbox workers
reused across sets): see the ``qa_graded`` fixture in conftest.py."""
from __future__ import annotations

import ast
import inspect

import pytest

from attnlab_grader.tests import qa
from attnlab_grader.judging.spec import Case
from attnlab.practice.misconceptions import MISCONCEPTIONS

from attnlab_grader.tests.conftest import GRADED, LAPTOP_ID_SET, needs_sandbox


@needs_sandbox
@pytest.mark.slow
@pytest.mark.xdist_group("grading")
@pytest.mark.parametrize("assignment", GRADED)
def test_reference_untouched_and_wrong_implementations(qa_graded, assignment):
    cases, reports, error = qa_graded[assignment]
    assert not error, error
    ref = reports["reference"]
    assert ref["status"] == "graded", ref
    bad = {g: i.message for g, i in ref["items"].items() if not i.ok}
    assert not bad, f"reference solution loses points: {bad}"
    assert ref["score"] == ref["max_score"] > 0
    untouched = reports["untouched"]
    assert untouched["status"] == "graded" and untouched["score"] == 0, untouched
    spec = qa.spec(assignment)
    cases = {n: s for n, s in cases.items() if not n.startswith("honest:") and n != "laptop-id"}
    assert set(cases) == set(spec.wrong)
    problems = []
    for name, student in cases.items():
        rep = reports[student]
        failed = {g for g, i in rep["items"].items() if not i.ok}
        expected = set(spec.wrong[name].breaks)
        if failed != expected:
            problems.append(f"{name}: broke {sorted(failed)}, expected {sorted(expected)}: "
                            + "; ".join(rep["items"][g].message for g in sorted(failed ^ expected) if g in rep["items"]))
    assert not problems, "\n".join(problems)


def _honest_cases():
    out = []
    for a in GRADED:
        for name, case in qa.spec(a).honest.items():
            marks = [pytest.mark.xfail(reason=case.xfail, strict=True)] if case.xfail else []
            out.append(pytest.param(a, name, id=f"{a}:{name}", marks=marks))
    return out


@needs_sandbox
@pytest.mark.slow
@pytest.mark.xdist_group("grading")
@pytest.mark.parametrize("assignment, name", _honest_cases())
def test_honest_alternatives_get_full_credit(qa_graded, assignment, name):
    """Correct work written differently (``solutions/<A>/honest/*.py``: einsum, loops over heads,
    float64 inside, other fill values, helpers in added cells, answers typed as strings, ...) earns
    every autograded point and raises no flag."""
    cases, reports, error = qa_graded[assignment]
    assert not error, error
    rep = reports[cases[f"honest:{name}"]]
    lost = {g: i.message for g, i in rep["items"].items() if not i.ok}
    assert not lost, f"{name} loses points: {lost}"
    assert rep["status"] == "graded" and not rep["flags"], rep["flags"]
    assert rep["score"] == rep["max_score"] > 0


def test_qa_case_files_are_well_formed():
    """Every wrong/*.py names the items it breaks and only real answer cells; honest/*.py break nothing."""
    for a in GRADED:
        sp = qa.spec(a)
        answer_cells = set(qa._source_solutions(a))
        tests = {c.grade_id for c in sp.checks}
        for kind, cases in (("wrong", {n: c for n, c in sp.wrong.items() if isinstance(c, Case)}),
                            ("honest", sp.honest)):
            for name, case in cases.items():
                cells = case.cells
                assert cells <= answer_cells, f"{a}/{kind}/{name}.py: unknown cells {cells - answer_cells}"
                assert bool(case.breaks) == (kind == "wrong"), f"{a}/{kind}/{name}.py: breaks {case.breaks}"
                assert set(case.breaks) <= tests, f"{a}/{kind}/{name}.py: unknown items {case.breaks}"
                assert case.mistake is None or case.mistake in MISCONCEPTIONS, \
                    f"{a}/{kind}/{name}.py: {case.mistake!r} is not in attnlab.practice.misconceptions"


def _defs(assignment):
    """Top-level functions and classes of the release's answer cells (methods stay in their class)."""
    nb = qa.release_notebook(assignment)
    out = {}
    for c in nb.cells:
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"):
            try:
                tree = ast.parse(c.source)
            except SyntaxError:
                continue
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    out[node.name] = node
    return out


def _ast_params(node: ast.FunctionDef) -> list[tuple[str, str]]:
    """``(name, kind)`` of a def's parameters, kinds named as ``inspect.Parameter`` names them."""
    a = node.args
    return ([(x.arg, "POSITIONAL_ONLY") for x in a.posonlyargs]
            + [(x.arg, "POSITIONAL_OR_KEYWORD") for x in a.args]
            + ([(a.vararg.arg, "VAR_POSITIONAL")] if a.vararg else [])
            + [(x.arg, "KEYWORD_ONLY") for x in a.kwonlyargs]
            + ([(a.kwarg.arg, "VAR_KEYWORD")] if a.kwarg else []))


def _ref_params(fn) -> list[tuple[str, str]]:
    return [(p.name, p.kind.name) for p in inspect.signature(fn).parameters.values()]


#: Classes whose methods must also copy the reference docstrings (other graded classes: signatures only;
#: 06's FeedForward.forward has its own exercise docstring).
DOCSTRING_CLASSES = ("MultiHeadAttention",)


#: Graded functions whose exercise writes its own docstring (a narrower contract than attnlab.nn's), and why.
OWN_DOCSTRING = {
    ("07_encoder_decoder", "padding_mask"): "asks for the range check only, not the library's type and rank checks",
}


def _paragraphs_without_checks(doc: str) -> list[str]:
    """``doc``'s paragraphs (split at blank lines) less the ``Raises:`` section and the ``Argument checks:``
    sentence that scripts/build_solutions.py puts in its place for a docstring taken ``without Raises``."""
    return [p for p in doc.split("\n\n") if not p.lstrip().startswith(("Raises:", "Argument checks:"))]


def _same_api(assignment, name, node, ref, docstring=True):
    if docstring and (assignment, name) not in OWN_DOCSTRING:
        mine, theirs = ast.get_docstring(node, clean=True), inspect.getdoc(ref)
        if "Argument checks: not asked" in mine:  # taken `without Raises`: the rest word for word
            assert _paragraphs_without_checks(mine) == _paragraphs_without_checks(theirs), \
                f"{assignment}: docstring of {name} differs from attnlab.nn (apart from its Raises)"
        else:
            assert mine == theirs, f"{assignment}: docstring of {name} differs from attnlab.nn"
    got, want = _ast_params(node), _ref_params(ref)
    assert got == want, f"{assignment}: {name}{got} vs attnlab.nn {want}"


def test_signature_comparison_sees_parameter_kinds():
    """`def f(masks)` is not `def f(*masks)`; `*masks` itself matches."""
    def combine(*masks):
        pass
    star, plain = (ast.parse(f"def combine({p}):\n    pass").body[0] for p in ("*masks", "masks"))
    assert _ast_params(star) == _ref_params(combine)
    assert _ast_params(plain) != _ref_params(combine)


@pytest.mark.parametrize("assignment", GRADED)
def test_signatures_match_reference(assignment):
    """Graded functions (and methods of graded classes) that have an ``attnlab.nn`` counterpart
    keep its name, signature (parameter names and kinds, ``*args`` included) and docstring
    (methods: signature; docstring too for ``DOCSTRING_CLASSES``).
    Functions without a counterpart (helpers such as ``softmax`` in 02) are skipped."""
    import attnlab.nn as ann
    checked = 0
    for name, node in _defs(assignment).items():
        ref = getattr(ann, name, None)
        if isinstance(node, ast.FunctionDef) and inspect.isfunction(ref):
            _same_api(assignment, name, node, ref)
            checked += 1
        elif isinstance(node, ast.ClassDef) and inspect.isclass(ref):
            for meth in node.body:
                if (isinstance(meth, ast.FunctionDef) and not meth.name.startswith("__")
                        and inspect.isfunction(getattr(ref, meth.name, None))):
                    _same_api(assignment, f"{name}.{meth.name}", meth, getattr(ref, meth.name),
                              docstring=name in DOCSTRING_CLASSES)
                    checked += 1
    assert checked, f"{assignment}: no graded function with an attnlab.nn counterpart found"


@pytest.mark.slow
@pytest.mark.xdist_group("grading-2")
@pytest.mark.parametrize("assignment", GRADED)
def test_source_notebook_passes_its_visible_tests(assignment, tmp_path, monkeypatch):
    """The instructor's source runs headless in a real kernel and every visible check passes."""
    import os
    import sys

    import nbformat
    from nbclient import NotebookClient

    from attnlab_grader.records.course import solutions_dir
    monkeypatch.setenv("ATTNLAB_HOME", str(tmp_path))
    monkeypatch.setenv("ATTNLAB_CI", "1")
    monkeypatch.setenv("ATTNLAB_LEARNER", "qa-instructor")
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    path = solutions_dir() / assignment / f"{assignment}.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not any(o.output_type == "error" for o in outputs)
    assert sum("visible checks passed" in o.get("text", "") for o in outputs) >= 2


@pytest.mark.parametrize("assignment", GRADED)
def test_by_hand_problem_in_notebook_is_the_one_graded(assignment):
    """Each by-hand check's skill and seed key (derived from its grade_id) are the ones the notebook
    shows with ``show_problem``, and the released notebook never builds a practice Variant."""
    import re

    from attnlab_grader.records.course import EXERCISES
    from attnlab_grader.judging.spec import ByHandCheck
    text = "\n".join(c.source for c in qa.release_notebook(assignment).cells)
    shown = set(re.findall(r'show_problem\("(\w+)", f"\{ASSIGNMENT\}/(\w+)"\)', text))
    assert f'ASSIGNMENT = "{assignment}"' in text
    checks = {(c.skill, c.key.split("/", 1)[1]) for c in qa.spec(assignment).checks if isinstance(c, ByHandCheck)}
    assert all(c.key.startswith(f"{assignment}/") for c in qa.spec(assignment).checks if isinstance(c, ByHandCheck))
    assert shown == checks
    assert ".variant(" not in text and ".answer" not in text, "the release holds an expected answer"
    assert (EXERCISES / assignment).is_dir()


@needs_sandbox
@pytest.mark.slow
@pytest.mark.xdist_group("grading")
@pytest.mark.parametrize("assignment", [LAPTOP_ID_SET])
def test_by_hand_numbers_of_the_id_the_notebook_ran_under_are_flagged(qa_graded, assignment):
    """Graded as 'stu6', the notebook ran as 'alice' (its setup cell printed so) and holds alice's
    right by-hand numbers: those items get no credit, each message names both ids, the submission is
    flagged for review; the code items keep their points."""
    cases, reports, error = qa_graded[assignment]
    assert not error, error
    rep = reports[cases["laptop-id"]]
    by_hand = {c.grade_id for c in qa.spec(assignment).checks if c.kind == "by_hand"}
    assert rep["status"] == "flagged"
    for gid, item in rep["items"].items():
        if gid in by_hand:
            assert not item.ok and "'alice'" in item.message and "'stu6'" in item.message, item
        else:
            assert item.ok, (gid, item)
    assert sum("learner id 'alice'" in f for f in rep["flags"]) == len(by_hand)
