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
# # Exercise 05 · Multi-head attention
#
# Lesson 05: `MultiHead(Q, K, V) = Concat(head_1, …, head_H) W^O` with `head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)`
# (Vaswani et al. 2017, §3.2.2). In code, one `d_model → d_model` projection computes all heads at once, then the
# result is **split** into `H` heads of width `d_k = d_model / H`, attended per head, and **merged** back.
#
# * Part 1 by hand (your own configuration), Part 2 `split_heads` / `merge_heads`, Part 3 `MultiHeadAttention.forward`.
# * Run the *check* cell under each answer for a first check. To check your work as the grader does, save and run `attnlab check` on this notebook in a terminal (or `from attnlab.check import check; check()` in a cell).
# * Graded: the shape trace (after `split_heads` (1), the scores `Q Kᵀ / √d_k` (1)), merge by hand (1),
#   parameter count (1), `split_heads` (2), `merge_heads` (2),
#   `MultiHeadAttention.forward` (4). At grading time your code also runs on fresh random inputs and weights.
# * Write it with `view`/`reshape`/`transpose`/`permute` (no einops here). `torch.nn.MultiheadAttention` and
#   `attnlab` give no credit.
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

ASSIGNMENT = "05_multi_head_attention"
gate("05")  # lists any lesson-05 skill you have not mastered yet; never blocks
print(learner_note())

# %% [markdown] nbgrader={"grade": false, "grade_id": "by_hand_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · By hand
#
# Type the answers themselves: a shape as a tuple like `(2, 3, 4, 5)`, a matrix as a list of rows, a count as an int.

# %% by-hand skill="mha_shape_trace" item="shape" variable="shape"
# answer: shape = (..., ...)  the shape after split_heads, e.g. (2, 3, 4, 5)
# Graded outside your kernel: `shape` is checked against your own configuration.

# %% by-hand skill="mha_scores_shape" item="scores_shape" variable="scores_shape" ids="bb8af753 4f90ee1f f723e20c"
# answer: scores_shape = (..., ...)  the shape of Q Kᵀ / √d_k for all heads, e.g. (2, 3, 4, 5)
# Graded outside your kernel: `scores_shape` is checked against your own configuration.

# %% by-hand skill="merge_heads_values" item="merge" variable="merged"
# answer: merged = [[...], ...]  the merged (L, d_model) matrix, one list per row
# Graded outside your kernel: `merged` is checked against your own variant.

# %% by-hand skill="mha_param_count" item="params" variable="n_params"
# answer: n_params = ...  the number of parameters, an int
# Graded outside your kernel: `n_params` is checked against your own configuration.

# %% [markdown] nbgrader={"grade": false, "grade_id": "heads_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · Splitting and merging heads
#
# Same names, signatures and docstrings as in `attnlab.nn`, without its argument checks (not asked, not graded).
# Mind the difference between `view`/`reshape` (which regroup numbers in memory order) and `transpose` (which moves
# an axis).

# %% nbgrader={"grade": false, "grade_id": "split_heads", "locked": false, "schema_version": 3, "solution": true}
def split_heads(x: Tensor, n_heads: int) -> Tensor:
    # docstring from attnlab.nn.mha.split_heads, without Raises
    ### BEGIN SOLUTION
    B, L, d_model = x.shape
    x = x.reshape(B, L, n_heads, d_model // n_heads)  # (B, L, H, d_k)
    return x.transpose(1, 2)  # (B, H, L, d_k)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_split_heads", "locked": true, "points": 2, "schema_version": 3, "solution": false}
x = torch.arange(8.0).view(1, 2, 4)  # (B=1, L=2, d_model=4)
h = split_heads(x, 2)
assert tuple(h.shape) == (1, 2, 2, 2), f"split_heads((1, 2, 4), 2) must be (B, H, L, d_k) = (1, 2, 2, 2), got {tuple(h.shape)}"
assert not torch.equal(h[0, 0], torch.tensor([[0.0, 1.0], [2.0, 3.0]])), \
    "head 0 got token 0's two halves: reshape to (B, L, H, d_k) first, then transpose(1, 2)"
assert torch.equal(h[0, 0], torch.tensor([[0.0, 1.0], [4.0, 5.0]])), \
    "head 0 must hold features 0..d_k-1 of every token"
assert tuple(split_heads(torch.zeros(3, 5, 12), 4).shape) == (3, 4, 5, 3), "check the shape for B=3, L=5, d_model=12, H=4"
print("split_heads: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: split_heads runs on random (B, L, d_model) inputs and head
# counts drawn at grading time; the grader compares it with the reference.
### END HIDDEN TESTS

# %% nbgrader={"grade": false, "grade_id": "merge_heads", "locked": false, "schema_version": 3, "solution": true}
def merge_heads(x: Tensor) -> Tensor:
    # docstring from attnlab.nn.mha.merge_heads, without Raises
    ### BEGIN SOLUTION
    B, H, L, d_k = x.shape
    return x.transpose(1, 2).reshape(B, L, H * d_k)  # (B, L, H, d_k) -> (B, L, d_model)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_merge_heads", "locked": true, "points": 2, "schema_version": 3, "solution": false}
h = torch.arange(8.0).view(1, 2, 2, 2)  # (B=1, H=2, L=2, d_k=2)
m = merge_heads(h)
assert tuple(m.shape) == (1, 2, 4), f"merge_heads((1, 2, 2, 2)) must be (B, L, H * d_k) = (1, 2, 4), got {tuple(m.shape)}"
assert not torch.equal(m[0, 0], torch.tensor([0.0, 1.0, 2.0, 3.0])), \
    "token 0 got head 0's two rows: transpose(1, 2) back to (B, L, H, d_k) before reshaping"
assert not torch.equal(m[0, 0], torch.tensor([4.0, 5.0, 0.0, 1.0])), "the heads are concatenated in the wrong order"
assert torch.equal(m[0, 0], torch.tensor([0.0, 1.0, 4.0, 5.0])), "token 0 must be [head 0 row 0, head 1 row 0]"
x = torch.randn(2, 3, 8)
assert torch.equal(merge_heads(split_heads(x, 4)), x), "merge_heads must undo split_heads exactly"
print("merge_heads: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: merge_heads runs on random (B, H, L, d_k) inputs drawn at
# grading time; the grader compares it with the reference.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "mha_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3 · `MultiHeadAttention.forward`
#
# `__init__` and an `attention` helper (your function from exercise 02) are given; keep `__init__` as it is (the
# grader also checks that `n_heads` not dividing `d_model` raises its ValueError). Write `forward`: project, split,
# build one bool mask from `attn_mask`, `key_padding_mask` and `is_causal` (True = may attend; add the head axis
# explicitly), attend, merge, and apply `w_o`. The KV cache comes in lesson 08: raise `NotImplementedError` if `cache`
# is given.

# %% nbgrader={"grade": false, "grade_id": "mha_forward", "locked": false, "schema_version": 3, "solution": true}
from __future__ import annotations


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """softmax(q kᵀ / √d_k) v with a bool mask (True = may attend): exercise 02, given."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., L, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ v, weights  # (..., L, d_v), (..., L, S)


class MultiHeadAttention(nn.Module):
    """Multi-head attention, Vaswani et al. 2017, §3.2.2 (Figure 2, right): this exercise's version of
    ``attnlab.nn.MultiHeadAttention``, with the same parameters and the same call, computed on the
    explicit path only (no fused kernel, no rotary positions; the KV cache comes in lesson 08).

    Args:
        d_model: model width; input and output feature size.
        n_heads: number of heads H; must divide ``d_model`` (``d_k = d_v = d_model / H``).
        bias: whether ``w_q, w_k, w_v, w_o`` have biases.
        dropout: kept for the library's signature; this version applies no attention dropout.

    Attributes:
        w_q, w_k, w_v, w_o: ``nn.Linear(d_model, d_model)``; ``w_q`` holds all heads' W_i^Q
            side by side (rows ``h*d_k:(h+1)*d_k`` of its weight belong to head h), etc.
        fused: always False here (the explicit path); n_heads, d_k, dropout.

    Raises:
        ValueError: if ``d_model % n_heads != 0``.

    Inputs are float tensors of one dtype ``(B, L, d_model)``; masks are bool (True = may attend).
    Example: ``MultiHeadAttention(8, 2)(torch.randn(1, 3, 8), is_causal=True, need_weights=True)``
    gives out ``(1, 3, 8)`` and weights ``(1, 2, 3, 3)``.
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = True, dropout: float = 0.0) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"n_heads={n_heads} must divide d_model={d_model}")
        self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
        self.dropout = dropout
        self.fused = False
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None, *,
                attn_mask: Tensor | None = None, key_padding_mask: Tensor | None = None, need_weights: bool = False,
                cache: KVCache | None = None,  # noqa: F821 (lesson 08 defines KVCache; the annotation is a string here)
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        # docstring from attnlab.nn.mha.MultiHeadAttention.forward, without Raises
        ### BEGIN SOLUTION
        if cache is not None:
            raise NotImplementedError("the KV cache is built in lesson 08: call forward with cache=None")
        key = query if key is None else key
        value = key if value is None else value
        L, S = query.shape[1], key.shape[1]
        q = split_heads(self.w_q(query), self.n_heads)  # (B, L, d_model) -> (B, H, L, d_k)
        k = split_heads(self.w_k(key), self.n_heads)  # (B, S, d_model) -> (B, H, S, d_k)
        v = split_heads(self.w_v(value), self.n_heads)  # (B, S, d_model) -> (B, H, S, d_v)
        mask = None
        if attn_mask is not None:
            mask = attn_mask[:, None] if attn_mask.dim() == 3 else attn_mask  # (B, L, S) -> (B, 1, L, S)
        if key_padding_mask is not None:
            pad = key_padding_mask[:, None, None, :]  # (B, S) -> (B, 1, 1, S)
            mask = pad if mask is None else mask & pad
        if is_causal:
            causal = torch.ones(L, S, dtype=torch.bool, device=query.device).tril(S - L)  # (L, S)
            mask = causal if mask is None else mask & causal
        out, weights = attention(q, k, v, mask)  # (B, H, L, d_v), (B, H, L, S)
        out = self.w_o(merge_heads(out))  # (B, H, L, d_v) -> (B, L, d_model) -> W^O
        return out, (weights if need_weights else None)
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_mha_forward", "locked": true, "points": 4, "schema_version": 3, "solution": false}
torch.manual_seed(0)
mha = MultiHeadAttention(d_model=8, n_heads=2).eval()
x = torch.randn(2, 5, 8)  # (B, L, d_model)
out, w = mha(x, need_weights=True)
assert tuple(out.shape) == (2, 5, 8), f"out must be (B, L, d_model) = (2, 5, 8), got {tuple(out.shape)}"
assert w is not None and tuple(w.shape) == (2, 2, 5, 5), "with need_weights=True, weights must be (B, H, L, S) = (2, 2, 5, 5)"
assert mha(x)[1] is None, "with need_weights=False (the default) return (out, None)"
ref = nn.MultiheadAttention(8, 2, batch_first=True).eval()  # PyTorch's layer with the same weights
with torch.no_grad():
    ref.in_proj_weight.copy_(torch.cat([mha.w_q.weight, mha.w_k.weight, mha.w_v.weight]))
    ref.in_proj_bias.copy_(torch.cat([mha.w_q.bias, mha.w_k.bias, mha.w_v.bias]))
    ref.out_proj.weight.copy_(mha.w_o.weight)
    ref.out_proj.bias.copy_(mha.w_o.bias)
    expected, expected_w = ref(x, x, x, average_attn_weights=False)
    assert torch.allclose(w, expected_w, atol=1e-5), "the per-head weights differ from PyTorch's: check split_heads and the 1/√d_k scale"
    assert torch.allclose(out, expected, atol=1e-5), "out differs from PyTorch's: check merge_heads and w_o"
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    expected_c, _ = ref(x, x, x, attn_mask=~causal)  # PyTorch's attn_mask: True = NOT allowed
    assert torch.allclose(mha(x, attn_mask=causal)[0], expected_c, atol=1e-5), "attn_mask (True = may attend) is not applied correctly"
    assert torch.allclose(mha(x, is_causal=True)[0], expected_c, atol=1e-5), "is_causal=True must apply the causal mask"
    pad = torch.tensor([[True] * 5, [True, True, True, False, False]])
    expected_p, _ = ref(x, x, x, key_padding_mask=~pad)
    assert torch.allclose(mha(x, key_padding_mask=pad)[0], expected_p, atol=1e-5), "key_padding_mask (True = real token) is not applied correctly"
    memory = torch.randn(2, 3, 8)  # cross-attention: S = 3 keys
    assert tuple(mha(x, memory)[0].shape) == (2, 5, 8), "cross-attention with key/value of length S = 3 must still give (B, L, d_model)"
print("MultiHeadAttention.forward: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: your MultiHeadAttention is built with random weights and
# run on fresh random inputs (self- and cross-attention, masks) drawn at grading time;
# the grader compares it with attnlab.nn's reference.
### END HIDDEN TESTS
