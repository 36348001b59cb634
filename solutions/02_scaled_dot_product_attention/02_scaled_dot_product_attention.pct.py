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
# # Exercise 02 · Scaled dot-product attention
#
# Lesson 02 showed the formula `Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V` (Vaswani et al. 2017, §3.2.1, Eq. 1).
# Here you compute it twice: **by hand** on small numbers made for you, then **in code**.
#
# * Cells marked *answer* are yours; every other cell is locked.
# * Run the *check* cell under each answer: for code it tells you right away what is wrong (without giving the answer away); for numbers computed by hand it only says whether your answer can be read. To check your work as the grader does (your numbers, your code on its own inputs), save and run `attnlab check` on this notebook in a terminal (or `from attnlab.check import check; check()` in a cell).
# * Your numbers are personal: they come from your learner id, so a classmate's numbers will not match yours. The setup cell prints that id; it must be the id your course grades you under.
# * Graded: the by-hand answers (1 point each), `attention_scores` (1), `softmax` (2),
#   `scaled_dot_product_attention` (3), and a short written answer (2, graded by your instructor).
#   When your instructor grades, your functions also run on fresh random inputs you have not seen.
# * Write your own code: importing the course library (`attnlab`) or calling the library version of the
#   function you are asked to write (for example `torch.softmax` inside `softmax`) earns no credit.
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

ASSIGNMENT = "02_scaled_dot_product_attention"
gate("02")  # lists any lesson-02 skill you have not mastered yet; never blocks
print(learner_note())

# %% [markdown] nbgrader={"grade": false, "grade_id": "by_hand_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · By hand
#
# Work with pen and paper (or a calculator), then type **the numbers themselves** into the answer cell,
# as a list of rows, e.g. `[[0.5, 1.0], [1.5, -2.0]]`. Code that computes the answer is not accepted here.

# %% by-hand skill="sdpa_scores" item="scores" variable="scores"
# answer: scores = [[...], [...]]  the scaled scores, one list per query row (2 decimals)
# Graded outside your kernel: the numbers in `scores` are checked against your own
# variant.

# %% by-hand skill="sdpa_softmax_row" item="weights" variable="weights"
# answer: weights = [[...], [...]]  the attention weights, one list per query row (2 decimals)
# Graded outside your kernel: the numbers in `weights` are checked against your own
# variant.

# %% by-hand skill="sdpa_output" item="output" variable="output"
# answer: output = [[...], [...]]  the output A V, one list per query row (2 decimals)
# Graded outside your kernel: the numbers in `output` are checked against your own
# variant.

# %% [markdown] nbgrader={"grade": false, "grade_id": "code_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · In code
#
# Write the three pieces with plain tensor operations (`@`, `.transpose`, `.exp`, `.max`, `.sum`,
# `.masked_fill`, ...). Shapes follow the course legend: `q: (..., L, d_k)`, `k: (..., S, d_k)`,
# `v: (..., S, d_v)`, and any leading axes (batch, heads) broadcast.
# The check cells use the two-token example of the lesson, where the output is ≈ `[[2.00, 3.00], [2.34, 3.34]]`.

# %% nbgrader={"grade": false, "grade_id": "attention_scores", "locked": false, "schema_version": 3, "solution": true}
def attention_scores(q: Tensor, k: Tensor) -> Tensor:
    """Scaled attention logits Q Kᵀ / √d_k (Vaswani et al. 2017, §3.2.1, Eq. 1).

    Args:
        q: ``(..., L, d_k)`` queries, float.
        k: ``(..., S, d_k)`` keys, same dtype; leading axes broadcast with ``q``'s.

    Returns:
        ``(..., L, S)``: entry ``[..., i, j]`` is ``q_i · k_j / √d_k``.
    """
    ### BEGIN SOLUTION
    d_k = q.shape[-1]
    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (..., L, d_k) @ (..., d_k, S) -> (..., L, S)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_attention_scores", "locked": true, "points": 1, "schema_version": 3, "solution": false}
q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])  # (L=2, d_k=2)
k = torch.tensor([[1.0, 0.0], [1.0, 1.0]])  # (S=2, d_k=2)
s = attention_scores(q, k)
assert isinstance(s, torch.Tensor), f"return a tensor, got {type(s).__name__}"
assert tuple(s.shape) == (2, 2), f"scores must have shape (L, S) = (2, 2), got {tuple(s.shape)}"
assert not torch.allclose(s, torch.tensor([[1.0, 1.0], [0.0, 1.0]])), "you forgot to divide by √d_k"
assert not torch.allclose(s, torch.tensor([[0.5, 0.5], [0.0, 0.5]])), "divide by √d_k, not by d_k"
assert torch.allclose(s, torch.tensor([[1.0, 1.0], [0.0, 1.0]]) / math.sqrt(2)), \
    "entry [i, j] must be q_i · k_j / √d_k: check which axis of k you transpose"
s3 = attention_scores(torch.zeros(4, 3, 5), torch.zeros(4, 7, 5))
assert tuple(s3.shape) == (4, 3, 7), f"with a batch axis, (4, 3, 5) and (4, 7, 5) must give (4, 3, 7), got {tuple(s3.shape)}"
print("attention_scores: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: attention_scores runs on fresh random inputs drawn at
# grading time and its values are compared with Q Kᵀ / √d_k by the grader.
### END HIDDEN TESTS

# %% nbgrader={"grade": false, "grade_id": "softmax", "locked": false, "schema_version": 3, "solution": true}
def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Numerically stable softmax along ``dim``: exp(x - max) / sum(exp(x - max)).

    Args:
        x: float tensor of any shape.
        dim: the axis whose entries become a probability distribution.

    Returns:
        Same shape as ``x``; entries in [0, 1] that sum to 1 along ``dim``. Entries equal
        to ``-inf`` get probability exactly 0 (used by masks).
    """
    ### BEGIN SOLUTION
    shifted = x - x.max(dim=dim, keepdim=True).values  # largest entry becomes 0: no overflow
    e = shifted.exp()
    return e / e.sum(dim=dim, keepdim=True)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_softmax", "locked": true, "points": 2, "schema_version": 3, "solution": false}
p = softmax(torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]))
assert isinstance(p, torch.Tensor) and tuple(p.shape) == (2, 3), "softmax must return a tensor shaped like its input"
assert torch.allclose(p.sum(dim=-1), torch.ones(2)), \
    f"each row must sum to 1 along dim=-1; your row sums are {p.sum(dim=-1).tolist()} (wrong axis?)"
assert torch.allclose(p[1], torch.full((3,), 1 / 3)), "equal inputs must get equal probabilities"
assert torch.allclose(p[0], torch.tensor([0.0900, 0.2447, 0.6652]), atol=1e-4), "did you exponentiate before normalising?"
p0 = softmax(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=0)
assert torch.allclose(p0.sum(dim=0), torch.ones(2)), "with dim=0 the columns must sum to 1: use the dim argument"
big = softmax(torch.tensor([[1000.0, 1001.0]]))
assert torch.isfinite(big).all(), "exp overflowed on large inputs: subtract the maximum first"
masked = softmax(torch.tensor([[0.0, float("-inf")]]))
assert masked[0, 1].item() == 0.0, "a -inf entry must get probability exactly 0"
print("softmax: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: softmax runs on fresh random inputs (including large
# values and other axes) and its values are compared with the reference by the grader.
### END HIDDEN TESTS

# %% nbgrader={"grade": false, "grade_id": "sdpa", "locked": false, "schema_version": 3, "solution": true}
def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None,
                                 dropout_p: float = 0.0) -> tuple[Tensor, Tensor]:
    # docstring from attnlab.nn.attention.scaled_dot_product_attention, without Raises
    ### BEGIN SOLUTION
    scores = attention_scores(q, k)  # (..., L, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # not allowed -> -inf before the softmax
    weights = softmax(scores, dim=-1)  # (..., L, S), rows sum to 1
    if dropout_p > 0:
        keep = torch.rand_like(weights) >= dropout_p
        weights_used = weights * keep / (1 - dropout_p)
    else:
        weights_used = weights
    return weights_used @ v, weights  # (..., L, S) @ (..., S, d_v) -> (..., L, d_v)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_sdpa", "locked": true, "points": 3, "schema_version": 3, "solution": false}
q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
k = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
v = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
result = scaled_dot_product_attention(q, k, v)
assert isinstance(result, tuple) and len(result) == 2, "return a pair (out, weights)"
out, w = result
assert tuple(out.shape) == (2, 2) and tuple(w.shape) == (2, 2), \
    f"out must be (L, d_v) = (2, 2) and weights (L, S) = (2, 2); got {tuple(out.shape)} and {tuple(w.shape)}"
assert torch.allclose(w.sum(dim=-1), torch.ones(2)), "each row of the weights must sum to 1 (softmax over the keys, dim=-1)"
known = {
    "you forgot to divide by √d_k": [[2.0, 3.0], [2.4621, 3.4621]],
    "you divided by d_k instead of √d_k": [[2.0, 3.0], [2.2449, 3.2449]],
    "the softmax runs over the queries (dim=-2) instead of the keys": [[2.1698, 3.3395], [1.8302, 2.6605]],
    "the weights are transposed before multiplying by v": [[1.4907, 2.3210], [2.5093, 3.6790]],
}
for mistake, wrong in known.items():
    assert not torch.allclose(out, torch.tensor(wrong), atol=1e-3), f"out matches a known mistake: {mistake}"
assert torch.allclose(out, torch.tensor([[2.0, 3.0], [2.34, 3.34]]), atol=0.01), \
    "out differs from the lesson's worked example ≈ [[2.00, 3.00], [2.34, 3.34]]"
allow = torch.tensor([[True, False], [True, True]])  # query 0 may only attend key 0
out_m, w_m = scaled_dot_product_attention(q, k, v, mask=allow)
assert w_m[0, 1].item() == 0.0, "a masked position (mask False) must get weight exactly 0: fill its score with -inf before the softmax"
assert torch.allclose(w_m.sum(dim=-1), torch.ones(2)), "with a mask, each row of the weights must still sum to 1 (mask before the softmax, not after)"
assert torch.allclose(out_m[0], v[0]), "query 0 sees only key 0, so its output must equal v[0]"
batch = scaled_dot_product_attention(torch.zeros(2, 3, 4, 5), torch.zeros(2, 3, 6, 5), torch.zeros(2, 3, 6, 7))
assert tuple(batch[0].shape) == (2, 3, 4, 7), f"leading axes must broadcast: expected out (2, 3, 4, 7), got {tuple(batch[0].shape)}"
print("scaled_dot_product_attention: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: scaled_dot_product_attention runs on fresh random inputs,
# with and without random masks, and out and weights are compared with attnlab.nn's
# reference by the grader.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "why_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3 · Written answer

# %% [markdown] nbgrader={"grade": true, "grade_id": "why_sqrt_dk", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **Why divide by √d_k?** In three or four sentences: what happens to the scores and to the softmax when
# d_k is large and the scores are *not* scaled, and why √d_k is the right factor (think about the variance of
# a dot product of two vectors whose d_k entries are independent with mean 0 and variance 1).
#
# ### BEGIN SOLUTION
# A dot product of two such vectors is a sum of d_k independent terms of variance 1, so its variance is d_k and
# its typical size grows like √d_k. Without scaling, the largest score in a row dominates the others by a wide
# margin once d_k is large, the softmax saturates towards a one-hot row, and its gradient shrinks (about 5
# times at d_k = 1024 on random vectors, more as scores grow in training), so learning slows down. Dividing
# by √d_k brings the variance back to 1 whatever d_k is, which keeps the softmax in
# its sensitive range (Vaswani et al. 2017, §3.2.1, footnote 4).
#
# **Rubric (2 points).** 1 point: unscaled scores have variance d_k (standard deviation √d_k), so the softmax
# saturates towards one-hot and its gradient shrinks. 1 point: dividing by √d_k (the standard deviation, not the
# variance d_k) brings the variance back to 1 for every d_k. No credit for "so that the rows sum to 1" (the
# softmax does that) or for scaling by d_model.
# ### END SOLUTION
