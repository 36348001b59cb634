"""Unit tests of the static scan, the check specs and the grade report (no sandbox, fast); the nbgrader
steps have their own modules in ``tests/steps/``."""
from __future__ import annotations

import pytest

from attnlab_grader.sandbox import scan
from attnlab_grader.tests import qa
from attnlab_grader.judging.spec import ByHandCheck, FunctionCheck, compare_values, decode, takes_trial
from attnlab_grader.judging.engine import solution_cells

A = "02_scaled_dot_product_attention"


def test_scan_flags_tampering_and_reference_imports():
    cells = [("a", "import os\nnp.allclose = lambda *a: True\nx = __import__('attnlab')"),
             ("b", "from attnlab.nn import causal_mask\nget_ipython()\ny = q.__class__"),
             ("c", "%timeit 1+1")]
    found = " | ".join(str(f) for f in scan.suspicious(cells, ("math", "numpy", "torch")))
    for needle in ("imports 'os'", "monkeypatching", "__import__", "imports attnlab", "get_ipython", "__class__"):
        assert needle in found, needle


def test_scan_allows_ordinary_solutions():
    cells = solution_cells(qa.reference_submission(A, "s"))
    assert scan.suspicious(cells, ("math", "numpy", "torch", "typing")) == []


def test_reference_use_follows_helpers():
    cells = [("sdpa", "def helper(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v)\n"
                      "def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):\n    return helper(q, k, v), None\n")]
    found = scan.reference_use(cells, "scaled_dot_product_attention", ("scaled_dot_product_attention",))
    assert found and "helper" not in str(found[0]) and found[0].line == 2


def test_by_hand_answers_must_be_literals():
    check = ByHandCheck("t", cell="c", variable="scores", skill="sdpa_scores", key="k")
    assert check.read([("c", "scores = [[1.0, 2.0]]\n")]) == [[1.0, 2.0]]
    with pytest.raises(ValueError, match="numbers themselves"):
        check.read([("c", "scores = v_scores.answer\n")])
    with pytest.raises(ValueError, match="does not assign"):
        check.read([("c", "raise NotImplementedError()\n")])


def test_compare_and_decode():
    import numpy as np
    ref = np.array([[1.0, 2.0]])
    assert compare_values(decode({"__array__": [[1.0, 2.0]], "shape": [1, 2]}), ref, "f", 1e-6, 1e-6) is None
    assert "shape" in compare_values(np.zeros((2, 1)), ref, "f", 1e-6, 1e-6)
    assert "max abs error" in compare_values(np.zeros((1, 2)), ref, "f", 1e-6, 1e-6)
    assert "bool" in compare_values(np.ones((1, 2)), np.ones((1, 2), bool), "m", 0, 0)
    with pytest.raises(TypeError, match="subclass"):
        decode({"__unsupported__": "x.Always", "subclass_of": ["torch.Tensor"]})


def test_dicts_and_strings_compare_by_key():
    import numpy as np
    ref = {"scores": np.ones((1, 2)), "kind": "causal", "n": 3}
    got = {"scores": np.ones((1, 2)), "kind": "causal", "n": 3}
    assert compare_values(got, ref, "f", 1e-6, 1e-6) is None
    assert "['n']" in compare_values({**got, "n": 4}, ref, "f", 1e-6, 1e-6)
    assert "dict keys" in compare_values({"scores": got["scores"]}, ref, "f", 1e-6, 1e-6)
    assert "expected a dict" in compare_values(np.ones((1, 2)), ref, "f", 1e-6, 1e-6)
    assert "differs" in compare_values({**got, "kind": "padding"}, ref, "f", 1e-6, 1e-6)
    # what the sandbox sends back for a dict (keys as strings), through the check's judge
    check = FunctionCheck("t", target="f", inputs=lambda rng: {}, call="f()", reference=lambda: ref)
    sent = decode({"__dict__": {"scores": {"__array__": [[1.0, 1.0]], "shape": [1, 2]}, "kind": "causal",
                                "n": {"__scalar__": 3.0, "int": True}}})
    assert check.judge(sent, {}, "s").ok


def test_inputs_can_force_a_case_per_trial():
    import numpy as np
    assert takes_trial(lambda rng, trial: {}) and takes_trial(lambda rng, trial=0: {})
    assert not takes_trial(lambda rng: {}) and not takes_trial(lambda rng, scale=2.0: {})
    seen = []

    def inputs(rng, trial):
        seen.append(trial)
        return {"L": [1, 3, 5][trial]}
    check = FunctionCheck("t", target="f", inputs=inputs, call="f(_I['L'])", reference=lambda L: L, trials=3)
    sandbox_job, raws = check.jobs(np.random.default_rng(0))
    assert seen == [0, 1, 2] and [r["L"] for r in raws] == [1, 3, 5]
    assert [t["L"] for t in sandbox_job["trials"]] == [1, 3, 5]


def test_grade_report_has_one_writer_and_one_reader(tmp_path):
    """attnlab_grader.records.grade_report: what the steps/pipeline write is what pipeline, review, export
    and report read (missing keys get their empty values, unreadable files are named)."""
    from attnlab_grader.records.grade_report import error_report, read_report, read_reports, write_report
    root = str(tmp_path)
    write_report(root, "A", "s1", error_report("s1", "A", "bad \x1b[31mred"))
    rep = read_report(root, "A", "s1")
    assert rep["status"] == "error" and rep["items"] == {} and rep["flags"] == []
    assert "\x1b" not in rep["reason"] and rep["reason"].startswith("bad ")
    folder = tmp_path / "reports" / "A"
    (folder / "s2.json").write_text('{"items": 3, "flags": "x"}')
    (folder / "s3.json").write_text("[1]")
    (folder / "s4.json").write_text("{")
    reports, problems = read_reports(root, "A")
    assert [r["student"] for r in reports] == ["s1", "s2"]
    assert reports[1] == {"student": "s2", "assignment": "A", "items": {}, "flags": ["x"], "status": "unknown"}
    assert problems == ["s3.json: not a report object", "s4.json: not readable (JSONDecodeError)"]
    assert read_report(root, "A", "s3") is None and read_report(root, "A", "nobody") is None
