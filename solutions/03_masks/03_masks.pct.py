# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: all
#     notebook_metadata_filter: all,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   language_info:
#     name: python
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false}
# # Exercise 03 · Masks
#
# Lesson 03: a mask says which keys each query **may attend** (bool, **True = may attend**, the rule of
# `torch.nn.functional.scaled_dot_product_attention`), and it acts on the scores **before** the softmax.
#
# * Part 1 by hand (your own numbers), Part 2 the three mask functions of `attnlab.nn`, Part 3 a check you write
#   that a causal model cannot see the future, Part 4 a written answer.
# * Run the *check* cell under each answer for immediate feedback (for numbers computed by hand: whether your answer can be read). To check your work as the grader does, save and run `attnlab check` on this notebook in a terminal (or `from attnlab.check import check; check()` in a cell).
# * Graded: by-hand masks (1 point each), `causal_mask` (2), `padding_mask` (2), `combine_masks` (1),
#   `sees_future` (2), written answer (2, by your instructor). At grading time your functions also run on
#   fresh random inputs.
# * Write your own code with plain tensor operations (`torch.ones`, `.tril`, `torch.arange`, comparisons, `&`).
#   Importing `attnlab`, `os`, `sys` or other modules earns no credit.
# * Answer cells may use `math`, `np`, `torch`, `nn`, `F`, `Tensor`, `Any`, `Callable`, `Optional`, `Sequence`
#   (imported in the setup cell) and your own earlier answers; other names defined in locked cells are not
#   available when your work is graded.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from typing import Any, Callable, Optional, Sequence
from IPython.display import Markdown, display

from attnlab.practice import gate
from attnlab.practice.problem import check_form, learner_note, show_problem

ASSIGNMENT = "03_masks"
gate("03")  # lists any lesson-03 skill you have not mastered yet; never blocks
print(learner_note())

# %% [markdown] nbgrader={"grade": false, "grade_id": "by_hand_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · By hand
#
# Type the mask itself as a list of rows of `1`/`0` (or `True`/`False`), e.g. `[[1, 0], [1, 1]]`.
# Code that builds the mask is not accepted here.

# %% by-hand skill="causal_mask_build" item="causal" variable="causal"
# answer: causal = [[...], ...]  the causal mask, one row per query (1 = may attend)
# Graded outside your kernel: the mask in `causal` is checked against your own variant.

# %% by-hand skill="padding_mask_build" item="padding" variable="padding"
# answer: padding = [[...], ...]  the padding mask, one row per sequence (1 = real token)
# Graded outside your kernel: the mask in `padding` is checked against your own variant.

# %% [markdown] nbgrader={"grade": false, "grade_id": "code_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · The mask functions
#
# Same names, signatures and docstrings as in `attnlab.nn`, without its argument checks (not asked, not graded).
# Return **bool** tensors.

# %% nbgrader={"grade": false, "grade_id": "causal_mask", "locked": false, "schema_version": 3, "solution": true}
def causal_mask(L: int, S: int | None = None, device: torch.device | str | None = None) -> Tensor:
    # docstring from attnlab.nn.masks.causal_mask, without Raises
    ### BEGIN SOLUTION
    S = L if S is None else S
    return torch.ones(L, S, dtype=torch.bool, device=device).tril(diagonal=S - L)  # (L, S)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_causal_mask", "locked": true, "points": 2, "schema_version": 3, "solution": false}
m = causal_mask(4)
assert isinstance(m, torch.Tensor) and m.dtype == torch.bool, "return a bool tensor (True = may attend)"
assert tuple(m.shape) == (4, 4), f"causal_mask(4) must have shape (L, S) = (4, 4), got {tuple(m.shape)}"
assert m.diagonal().all(), "each query must be allowed to attend to itself: keep the diagonal"
assert not m[0, 1], "query 0 must not see key 1 (the future): is the mask inverted or transposed?"
assert m[3].all() and m[:, 0].all(), "the last query sees every key, and every query sees key 0"
assert int(m.sum()) == 10, f"a 4 x 4 causal mask allows 10 positions, yours allows {int(m.sum())}"
c = causal_mask(2, 5)
assert tuple(c.shape) == (2, 5), f"causal_mask(2, 5) must have shape (2, 5), got {tuple(c.shape)}"
assert c[1].all() and not c[0, 4], ("with S > L the queries are the LAST L positions: the last query sees all keys, "
                                    "the one before it all but the last")
print("causal_mask: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: causal_mask runs for random L and S >= L drawn at grading
# time; the grader compares it with the reference.
### END HIDDEN TESTS

# %% nbgrader={"grade": false, "grade_id": "padding_mask", "locked": false, "schema_version": 3, "solution": true}
def padding_mask(lengths: Tensor | list[int], S: int) -> Tensor:
    # docstring from attnlab.nn.masks.padding_mask, without Raises
    ### BEGIN SOLUTION
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(S, device=lengths.device)  # (S,)
    return positions[None, :] < lengths[:, None]  # (B, S)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_padding_mask", "locked": true, "points": 2, "schema_version": 3, "solution": false}
p = padding_mask(torch.tensor([3, 1]), 4)
assert isinstance(p, torch.Tensor) and p.dtype == torch.bool, "return a bool tensor (True = real token)"
assert tuple(p.shape) == (2, 4), f"padding_mask(lengths of 2 sequences, S=4) must be (B, S) = (2, 4), got {tuple(p.shape)}"
assert p[0, :3].all() and p[1, 0], "real tokens (the first `length` positions) must be True"
assert not p[0, 3] and not p[1, 1:].any(), "padding positions must be False: is the mask inverted or off by one?"
assert tuple(padding_mask([2, 2, 2], 3).shape) == (3, 3), "lengths may also be a plain list"
print("padding_mask: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: padding_mask runs on random lengths drawn at grading time;
# the grader compares it with the reference.
### END HIDDEN TESTS

# %% nbgrader={"grade": false, "grade_id": "combine_masks", "locked": false, "schema_version": 3, "solution": true}
def combine_masks(*masks: Tensor | None) -> Tensor | None:
    # docstring from attnlab.nn.masks.combine_masks, without Raises
    ### BEGIN SOLUTION
    result = None
    for m in masks:
        if m is None:
            continue
        result = m if result is None else result & m
    return result
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_combine_masks", "locked": true, "points": 1, "schema_version": 3, "solution": false}
causal = torch.tensor([[True, False], [True, True]])  # (L, S) = (2, 2)
pad = torch.tensor([[True, True], [True, False]])  # (B, S) = (2, 2)
both = combine_masks(causal, None, pad[:, None, :])  # (2, 2) with (2, 1, 2) -> (B, L, S)
assert tuple(both.shape) == (2, 2, 2), f"(L, S) with (B, 1, S) must broadcast to (B, L, S) = (2, 2, 2), got {tuple(both.shape)}"
assert both.dtype == torch.bool, "the combination must stay a bool mask"
assert not both[1, 1, 1], "a position is allowed only if EVERY mask allows it (logical AND, not OR)"
assert both[0, 1, 1], "a position allowed by every mask must stay allowed"
assert combine_masks(None, None) is None, "with only None arguments, return None"
print("combine_masks: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: combine_masks runs on random masks of broadcastable shapes
# drawn at grading time; the grader compares it with the reference.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "future_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3 · A causal model cannot see the future
#
# Write `sees_future(attention, L, d_model, t)`: run `attention` (a function `(B, L, d_model) -> (B, L, d_model)`)
# on random inputs, then change **every input after position `t`**, run it again, and return `True` if **any output
# at positions `0 .. t`** changed. A causal attention must give `False`; one that peeks even one step ahead must give `True`.

# %% nbgrader={"grade": false, "grade_id": "sees_future", "locked": false, "schema_version": 3, "solution": true}
def sees_future(attention: Callable[[Tensor], Tensor], L: int = 6, d_model: int = 4, t: int = 2) -> bool:
    """Perturbation test: do outputs at positions ``0..t`` depend on inputs after ``t``?

    Args:
        attention: maps ``x: (B, L, d_model)`` to ``(B, L, d_model)``.
        L: sequence length; d_model: feature size; t: last position treated as "the past"
            (``0 <= t < L - 1``).

    Returns:
        True if changing ``x[:, t + 1:]`` changes ``attention(x)[:, : t + 1]``.
    """
    ### BEGIN SOLUTION
    x = torch.randn(2, L, d_model)
    changed = x.clone()
    changed[:, t + 1:] = torch.randn(2, L - t - 1, d_model)  # new future, same past
    before, after = attention(x)[:, : t + 1], attention(changed)[:, : t + 1]
    return not torch.allclose(before, after, atol=1e-6)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_sees_future", "locked": true, "points": 2, "schema_version": 3, "solution": false}
def toy_attention(mask_fn):
    def attention(x):  # one head, no projections: softmax(x xᵀ / √d) x with a mask
        L = x.shape[1]
        scores = x @ x.transpose(1, 2) / x.shape[-1] ** 0.5  # (B, L, L)
        allowed = mask_fn(L)
        if allowed is not None:
            scores = scores.masked_fill(~allowed, float("-inf"))
        return scores.softmax(dim=-1) @ x
    return attention

causal_attention = toy_attention(lambda L: torch.ones(L, L, dtype=torch.bool).tril())
full_attention = toy_attention(lambda L: None)
peek_one = toy_attention(lambda L: torch.ones(L, L, dtype=torch.bool).tril(1))
assert sees_future(causal_attention, L=6, t=2) is False, "a causal attention must not see the future: did you compare the future positions too?"
assert sees_future(full_attention, L=6, t=2) is True, "attention without a mask sees everything: your check missed it"
assert sees_future(peek_one, L=6, t=1) is True, "this attention peeks ONE step ahead: change every position after t, not only the last"
print("sees_future: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: sees_future is called with causal, unmasked and slightly
# leaky attentions, for random L and t drawn at grading time.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "written_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 4 · Written answer

# %% [markdown] nbgrader={"grade": true, "grade_id": "mask_after_softmax", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **What goes wrong if the mask is applied *after* the softmax** (e.g. `weights.masked_fill(~mask, 0)`) instead of
# setting the masked scores to −∞ before it? Answer in three or four sentences: what happens to the rows of the
# weights, and what a causal model would learn during training.
#
# ### BEGIN SOLUTION
# The softmax has already spread probability over the forbidden keys, so zeroing them afterwards leaves rows that
# no longer sum to 1 (and the kept weights are too small, by a different amount in every row); the output is a
# shrunken, unnormalised average. Worse, the allowed weights were computed with the future scores in the
# denominator, so information about future tokens still leaks into the outputs through the normalisation. A causal
# language model trained this way can partly read the tokens it must predict, so its training loss looks too good
# and it fails at generation time, when the future is really unknown. Setting the scores to −∞ before the softmax
# gives exact zeros and rows that sum to 1 over the allowed keys only.
#
# **Rubric (2 points).** 1 point: the rows no longer sum to 1 (a shrunken, unnormalised average), and the
# future scores are still in the softmax's denominator, so future information leaks into the outputs. 1 point:
# a causal model then partly reads the tokens it must predict, its training loss looks too good and it fails
# when generating; the fix is −∞ on the scores before the softmax.
# ### END SOLUTION
