"""``attnlab check`` judges as a class's grading does: the same verdict on every item.

The check calls the grader's judging layer directly (``judging.engine.judge_notebook`` in a sandbox, after
``judging.structure``'s comparison with the release); a class is graded by the nbgrader pipeline
(``attnlab_grader.classroom.pipeline``: intake, ``VerifySubmission``, ``SandboxGrade``...).  For a sample of
the QA corpus -- in three sets, the reference solution, an honest alternative and wrong cases of
``solutions/<set>/wrong`` (a by-hand mistake among them), and a reference with an edited test cell -- both
are run on the same notebooks (the same learner ids, so the same by-hand variants) and each item's
``(ok, kind, mistake)`` must be equal, as must the points.

Trial inputs are drawn afresh by each run, so the sample holds cases whose verdict is the same on every draw
(the QA corpus's expectations: ``autograder/attnlab_grader/tests/test_course_qa.py``, audited on many draws by
``test_stability.py``); the test also checks that every wrong case breaks exactly the items it declares, so a
sample case that stopped being stable shows as that, not as a disagreement.  Slow: one pipeline run on 16
notebooks and 16 checks, a few minutes on a loaded 2-core machine.
"""
from __future__ import annotations

import pytest

from attnlab.check import SelfCheckMode, run_check
from attnlab_grader.tests import qa
from attnlab_grader.tests.conftest import needs_sandbox

#: ``{set: (honest alternative, [wrong cases])}``: wrong cases naming a catalogued mistake, one caught by the
#: library watch with no mistake named (set 02), a wrong dtype (set 03) and a by-hand mistake in each set.
SAMPLE = {
    "02_scaled_dot_product_attention": ("einsum_scores", ["softmax_wrong_axis", "sdpa_uses_fused_kernel",
                                                          "by_hand_scores_unscaled"]),
    "03_masks": ("causal_by_comparison", ["causal_inverted", "causal_float", "by_hand_causal_inverted"]),
    "05_multi_head_attention": ("mha_einsum_attention", ["merge_heads_wrong_order", "mha_forgets_w_o",
                                                         "by_hand_merge_wrong_order"]),
}
#: A reference submission of this set with this test cell edited (tampered: no credit for that item).
TAMPERED = ("03_masks", "test_causal_mask")


def _notebooks() -> dict[tuple[str, str], tuple[object, set[str]]]:
    """``{(set, learner id): (notebook, the items it must fail)}`` of the sample; a by-hand case goes to a
    learner whose variant makes the mistake give different numbers (as in the QA class)."""
    out = {}
    for a, (honest, wrong) in SAMPLE.items():
        out[(a, "same-reference")] = (qa.reference_submission(a, "same-reference"), set())
        out[(a, f"same-honest-{honest}")] = (qa.honest_submission(a, f"same-honest-{honest}", honest), set())
        for name in wrong:
            who = next(f"same-{name}-{i}" for i in range(50) if qa.mistake_differs(a, f"same-{name}-{i}", name))
            out[(a, who)] = (qa.wrong_submission(a, who, name), set(qa.spec(a).wrong[name].breaks))
    a, test = TAMPERED
    nb = qa.reference_submission(a, "same-tampered")
    qa.cell(nb, test).source = "pass  # the checks are in my way\n"
    out[(a, "same-tampered")] = (nb, {test})
    return out


def test_the_sample_names_real_qa_cases():
    """Every sampled case is a file of the set's QA corpus (fast: no grading)."""
    for a, (honest, wrong) in SAMPLE.items():
        spec = qa.spec(a)
        assert honest in spec.honest, f"{a}: no honest/{honest}.py"
        assert set(wrong) <= set(spec.wrong), f"{a}: no wrong/{sorted(set(wrong) - set(spec.wrong))}.py"
        assert any(n.startswith("by_hand") for n in wrong), f"{a}: the sample has no by-hand mistake"
    assert TAMPERED[1] in {c.grade_id for c in qa.spec(TAMPERED[0]).checks}


@pytest.mark.slow
@needs_sandbox
@pytest.mark.xdist_group("grading-2")
def test_the_check_and_the_class_pipeline_give_the_same_verdicts(tmp_path):
    from attnlab_grader.classroom.pipeline import grade_many
    notebooks = _notebooks()
    course = tmp_path / "course"
    for (a, who), (nb, _) in notebooks.items():
        qa.write(course, who, a, nb)
    summaries = grade_many(course, list(SAMPLE), jobs=1, feedback=False, progress=False)
    problems = []
    for (a, who), (nb, expected) in notebooks.items():
        assert not summaries[a].error, summaries[a].error
        report = next(r for r in summaries[a].reports if r["student"] == who)
        assert report["status"] in ("graded", "flagged"), report
        path = qa.write(tmp_path / "learners", who, a, nb)
        check = run_check(path, assignment=a, learner=who)
        assert check.mode is SelfCheckMode.FULL, check.text()
        graded = {g: (v.ok, v.kind, v.mistake) for g, v in report["items"].items()}
        checked = {i.grade_id: (i.verdict.ok, i.verdict.kind, i.verdict.mistake) for i in check.items}
        failed = {g for g, (ok, _, _) in checked.items() if not ok}
        if failed != expected:
            problems.append(f"{a}/{who}: the check failed {sorted(failed)}, expected {sorted(expected)}")
        if checked != graded:
            problems.append(f"{a}/{who}: check {checked} != pipeline {graded}")
        if (check.score, check.max_score) != (report["score"], report["max_score"]):
            problems.append(f"{a}/{who}: check {check.score}/{check.max_score} != pipeline "
                            f"{report['score']}/{report['max_score']}")
    assert not problems, "\n".join(problems)
