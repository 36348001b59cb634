"""A learner's walkthrough of sets 02, 03 and 09 with planted mistakes: for every mistake, ``attnlab check``
says something at least as specific as the notebook's own check cell, on the item that holds the mistake.

"At least as specific": the item names the catalogue mistake, or (where the grader knows no such mistake)
carries the check cell's own sentence.  "On the right item": a named mistake appears only on the items
whose code holds it, and an item whose code is right passes.  Each set is one run of the real grading
pipeline (sandbox included) on the reference submission with the mistakes planted in its answer cells;
set 09 also runs the notebook's visible training cell (the check-cell message), about two minutes on a
loaded 2-core machine.
"""
from __future__ import annotations

import uuid

import nbformat
import pytest

from attnlab.check import run_check
from attnlab_grader.tests import qa
from attnlab_grader.tests.conftest import needs_sandbox

pytestmark = [pytest.mark.slow, needs_sandbox, pytest.mark.xdist_group("grading-2")]


def _check(tmp_path, assignment, planted: dict[str, str] | None = None, cases: tuple[str, ...] = ()):
    learner = f"walk-{uuid.uuid4().hex[:8]}"
    nb = qa.reference_submission(assignment, learner)
    for case in cases:
        nb = qa.apply_case(nb, qa.spec(assignment).wrong[case], assignment, learner)
    for cell, source in (planted or {}).items():
        qa.cell(nb, cell).source = source
    path = tmp_path / f"{assignment}.ipynb"
    nbformat.write(nb, str(path))
    rep = run_check(path, learner=learner)
    return {i.grade_id: i for i in rep.items}, rep.text()


def _only_on(items, mistake, grade_id, text):
    holders = {g for g, i in items.items() if mistake in i.mistakes}
    assert holders == {grade_id}, f"{mistake} should be named on {grade_id} only, found on {holders}\n{text}"


def test_set_02_softmax_over_the_wrong_axis_is_named_on_the_item_that_holds_it(tmp_path):
    items, text = _check(tmp_path, "02_scaled_dot_product_attention", {
        "softmax": "def softmax(x, dim=-1):\n"
                   "    e = (x - x.max(dim=-1, keepdim=True).values).exp()  # ignores dim\n"
                   "    return e / e.sum(dim=-1, keepdim=True)\n",
        "sdpa": "def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):\n"
                "    s = attention_scores(q, k)\n"
                "    if mask is not None:\n"
                "        s = s.masked_fill(~mask, float('-inf'))\n"
                "    e = (s - s.max(dim=-2, keepdim=True).values).exp()  # normalised over the queries\n"
                "    w = e / e.sum(dim=-2, keepdim=True)\n"
                "    return w @ v, w\n"})
    _only_on(items, "softmax_ignores_dim", "test_softmax", text)
    _only_on(items, "softmax_wrong_axis", "test_sdpa", text)
    assert items["test_attention_scores"].status == "passed", text


def test_set_03_an_unnamed_mistake_carries_the_check_cells_sentence(tmp_path):
    items, text = _check(tmp_path, "03_masks", {
        "padding_mask": "def padding_mask(lengths, S):\n"
                        "    lengths = torch.as_tensor(lengths)\n"
                        "    return torch.arange(S)[None, :] <= lengths[:, None]  # one position too many\n",
        "causal_mask": "def causal_mask(L, S=None, device=None):\n"
                       "    S = L if S is None else S\n"
                       "    return torch.ones(L, S, dtype=torch.bool, device=device).tril(S - L - 1)\n"})
    padding = items["test_padding_mask"]
    assert padding.status == "failed" and not padding.mistakes, text
    # the visible check cell's own words (solutions/03_masks: test_padding_mask)
    assert "padding positions must be False: is the mask inverted or off by one?" in padding.message, text
    _only_on(items, "causal_excludes_diagonal", "test_causal_mask", text)
    assert items["test_combine_masks"].status == "passed", text


def test_set_09_a_broken_step_and_a_post_ln_block_are_each_blamed_where_they_are(tmp_path):
    items, text = _check(tmp_path, "09_capstone", cases=("step_no_zero_grad", "block_norm_after_residual"))
    _only_on(items, "no_zero_grad", "test_train_step", text)
    _only_on(items, "block_post_ln", "test_block", text)
    assert items["test_tiny_gpt"].status == "passed", text
    run = items["test_training_run"]
    # not charged as another loop's mistake, not sent to the TinyGPT items (which passed)
    assert run.status == "failed" and not run.mistakes and "see the TinyGPT items" not in run.message, text
    # the training cell tells the two apart: the step is named, and the model (post-LN inside) too
    assert "your train_step" in run.message and "check zero_grad" in run.message, text
