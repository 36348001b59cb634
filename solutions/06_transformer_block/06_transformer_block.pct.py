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
# ---

# %% [markdown] id="0" nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false}
# # Exercise 06 · The Transformer block
#
# Lesson 06 assembled the encoder block from its parts: self-attention and a position-wise feed-forward network
# (FFN), each wrapped in a residual connection and a LayerNorm, placed either **after** the addition
# (post-LN, Vaswani et al. 2017: `LN(x + f(x))`) or **before** the sublayer (pre-LN, GPT-2: `x + f(LN(x))`).
# Here you compute LayerNorm and a parameter count **by hand**, then write the FFN, the block and two counters
# **in code**.
#
# * Cells marked *answer* are yours; every other cell is locked.
# * Run the *check* cell under each answer: for code it tells you right away what is wrong (without giving the answer away); for numbers computed by hand it only says whether your answer can be read. To check your work as the grader does (your numbers, your code on its own inputs), save and run `attnlab check` on this notebook in a terminal (or `from attnlab.check import check; check()` in a cell).
# * Your numbers are personal: they come from your learner id, so a classmate's numbers will not match yours. The setup cell prints that id; it must be the id your course grades you under.
# * Graded: the two by-hand answers (1 point each), `FeedForward.forward` (2), `block_forward` (3),
#   `count_parameters` (1) and `count_block_parameters` (2). When your instructor grades, your code also runs on
#   fresh random inputs and weights you have not seen.
# * Write your own code with plain tensor operations; importing the course library, or calling PyTorch's own
#   Transformer layers, earns no credit. Allowed imports: `math`, `numpy`, `torch`, `typing`, `functools`,
#   `itertools`, `collections`, `dataclasses`, `einops`.
# * Answer cells may use `math`, `np`, `torch`, `nn`, `F`, `Tensor`, `Optional`, `Sequence` and your own earlier
#   answers; other names defined in locked cells are not available when your work is graded.

# %% id="1" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from typing import Optional, Sequence
from IPython.display import Markdown, display

from attnlab.nn import EncoderBlock
from attnlab.nn import count_parameters as library_count_parameters
from attnlab.nn import FeedForward as LibraryFeedForward
from attnlab.practice import gate
from attnlab.practice.problem import check_form, learner_note, show_problem

ASSIGNMENT = "06_transformer_block"
gate("06")  # lists any lesson-06 skill you have not mastered yet; never blocks
print(learner_note())

# %% [markdown] id="2" nbgrader={"grade": false, "grade_id": "by_hand_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · By hand
#
# Work with pen and paper (or a calculator), then type **the numbers themselves** into the answer cell.
# Code that computes the answer is not accepted here.

# %% by-hand skill="layernorm_by_hand" item="layernorm" variable="ln_out" ids="3 4 5"
# answer: ln_out = [y_1, y_2, y_3, y_4], the 4 outputs as numbers (2 decimals)
# Graded outside your kernel: the numbers in `ln_out` are checked against your own
# variant.

# %% by-hand skill="block_param_count" item="block_params" variable="n_params" ids="6 7 8"
# answer: n_params = the parameter count, an integer
# Graded outside your kernel: the number in `n_params` is checked against your own
# variant.

# %% [markdown] id="9" nbgrader={"grade": false, "grade_id": "ffn_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · In code
#
# ### The position-wise feed-forward network
#
# `FFN(x) = act(x W_1 + b_1) W_2 + b_2` (Vaswani et al. 2017, §3.3, Eq. 2), applied to every position on its own.
# The constructor is given: **do not change it** (the grader loads its own weights into `w_1` and `w_2`, and checks
# that another `activation` raises its ValueError).
# Write `forward`. `activation` is `"relu"` (the paper) or `"gelu"` (GPT-2, the exact erf form: `F.gelu(h)`).

# %% id="10" nbgrader={"grade": false, "grade_id": "feed_forward", "locked": false, "schema_version": 3, "solution": true}
class FeedForward(nn.Module):
    """Position-wise feed-forward network ``(..., d_model) -> (..., d_model)`` (Vaswani et al. 2017, §3.3, Eq. 2).

    Args:
        d_model: input and output width.
        d_ff: hidden width (4 · d_model in most models).
        activation: ``"relu"`` (the paper) or ``"gelu"`` (GPT-2, exact erf form).
        bias: whether the two linear layers have biases.

    Attributes:
        w_1: ``nn.Linear(d_model, d_ff)``; w_2: ``nn.Linear(d_ff, d_model)``.

    Raises:
        ValueError: if ``activation`` is not ``"relu"`` or ``"gelu"``.
    """

    def __init__(self, d_model: int, d_ff: int, activation: str = "relu", bias: bool = True) -> None:
        super().__init__()
        if activation not in ("relu", "gelu"):
            raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
        self.d_model, self.d_ff, self.activation = d_model, d_ff, activation
        self.w_1 = nn.Linear(d_model, d_ff, bias=bias)
        self.w_2 = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x: Tensor) -> Tensor:
        """``x: (..., d_model) -> (..., d_model)``: expand to d_ff, activation, project back; rows independent."""
        ### BEGIN SOLUTION
        h = self.w_1(x)  # (..., d_ff)
        h = F.relu(h) if self.activation == "relu" else F.gelu(h)
        return self.w_2(h)  # (..., d_model)
        ### END SOLUTION


# %% id="11" nbgrader={"grade": true, "grade_id": "test_feed_forward", "locked": true, "points": 2, "schema_version": 3, "solution": false}
torch.manual_seed(0)
for act in ("relu", "gelu"):
    mine = FeedForward(8, 32, activation=act)
    ref = LibraryFeedForward(8, 32, activation=act)
    ref.load_state_dict(mine.state_dict())  # the same weights in the library's FFN
    x = torch.randn(2, 5, 8)  # (B, L, d_model)
    with torch.no_grad():
        y, y_ref = mine(x), ref(x)
        linear_only = mine.w_2(mine.w_1(x))
        relu_instead = mine.w_2(F.relu(mine.w_1(x)))
    assert isinstance(y, torch.Tensor) and y.shape == x.shape, \
        f"FFN must map (B, L, d_model) to the same shape, got {tuple(getattr(y, 'shape', ()))} for input {tuple(x.shape)}"
    assert not torch.allclose(y, linear_only, atol=1e-5), "there is no activation between w_1 and w_2"
    if act == "gelu":
        assert not torch.allclose(y, relu_instead, atol=1e-5), "activation='gelu' must use GELU, not ReLU"
        assert not torch.allclose(y, mine.w_2(F.gelu(mine.w_1(x), approximate="tanh")), atol=1e-6), \
            "use the exact (erf) GELU, F.gelu(h), not the tanh approximation"
    assert torch.allclose(y, y_ref, atol=1e-5), f"activation={act!r}: the output differs from the lesson's FFN with the same weights"
    with torch.no_grad():
        single = mine(x[0, 3])  # one position, shape (d_model,)
    assert torch.allclose(single, y[0, 3], atol=1e-5), "every position must be transformed on its own (the FFN mixes no positions)"
print("FeedForward.forward: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: FeedForward runs with fresh weights and inputs (ReLU and
# GELU) and is compared with the library's FFN holding the same weights.
### END HIDDEN TESTS

# %% [markdown] id="12" nbgrader={"grade": false, "grade_id": "block_intro", "locked": true, "schema_version": 3, "solution": false}
# ### One encoder block, both norm orders
#
# Write the block's forward pass from its submodules (dropout 0, no mask), as lesson 06 did by hand:
#
# * post-LN (`norm_first=False`): `h = norm1(x + SA(x))`, then `y = norm2(h + FFN(h))`;
# * pre-LN (`norm_first=True`): `h = x + SA(norm1(x))`, then `y = h + FFN(norm2(h))`.
#
# `self_attn(t)` returns a pair `(output, weights)` like the course's `MultiHeadAttention`; `ffn`, `norm1` and
# `norm2` map `(B, L, d_model)` to the same shape.

# %% id="13" nbgrader={"grade": false, "grade_id": "block_forward", "locked": false, "schema_version": 3, "solution": true}
def block_forward(x: Tensor, self_attn, ffn, norm1, norm2, norm_first: bool) -> Tensor:
    """Encoder block forward pass from its submodules (Vaswani et al. 2017, §3.1; pre-LN: Xiong et al. 2020).

    Args:
        x: ``(B, L, d_model)`` float, the residual stream.
        self_attn: callable, ``(B, L, d_model) -> (output (B, L, d_model), weights)``.
        ffn: callable, ``(B, L, d_model) -> (B, L, d_model)``.
        norm1, norm2: LayerNorms for the attention and the feed-forward sublayer.
        norm_first: False = post-LN ``LN(x + f(x))``; True = pre-LN ``x + f(LN(x))``.

    Returns:
        ``(B, L, d_model)``.
    """
    ### BEGIN SOLUTION
    if norm_first:  # pre-LN: the stream is only ever added to
        h = x + self_attn(norm1(x))[0]  # (B, L, d_model)
        return h + ffn(norm2(h))
    h = norm1(x + self_attn(x)[0])  # post-LN: normalise after each residual addition
    return norm2(h + ffn(h))
    ### END SOLUTION


# %% id="14" nbgrader={"grade": true, "grade_id": "test_block_forward", "locked": true, "points": 3, "schema_version": 3, "solution": false}
torch.manual_seed(1)
x = torch.randn(2, 5, 16)  # (B, L, d_model)
for norm_first in (False, True):
    blk = EncoderBlock(d_model=16, n_heads=2, d_ff=64, norm_first=norm_first).eval()
    with torch.no_grad():
        for norm in (blk.norm1, blk.norm2):  # non-trivial gains and biases
            norm.weight.normal_(1.0, 0.3)
            norm.bias.normal_(0.0, 0.3)
        other = EncoderBlock(d_model=16, n_heads=2, d_ff=64, norm_first=not norm_first).eval()
        other.load_state_dict(blk.state_dict())
        y = block_forward(x, blk.self_attn, blk.ffn, blk.norm1, blk.norm2, norm_first)
        expected, swapped = blk(x), other(x)
    name = "pre-LN (norm_first=True)" if norm_first else "post-LN (norm_first=False)"
    assert isinstance(y, torch.Tensor) and y.shape == x.shape, f"{name}: the block must return (B, L, d_model) = {tuple(x.shape)}"
    assert not torch.allclose(y, swapped, atol=1e-5), f"{name}: you computed the other norm order; check what norm_first means"
    assert torch.allclose(y, expected, atol=1e-5), \
        f"{name}: differs from EncoderBlock with the same submodules; check which tensor each residual adds and which norm each sublayer uses"
print("block_forward: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: block_forward runs with fresh weights (attention, FFN and
# LayerNorm gains/biases), inputs and both norm orders, and is compared with the
# library's EncoderBlock holding the same weights.
### END HIDDEN TESTS

# %% [markdown] id="15" nbgrader={"grade": false, "grade_id": "count_intro", "locked": true, "schema_version": 3, "solution": false}
# ### Counting parameters
#
# First a counter for any module: the number of **scalars** in its parameters (a shared, *tied* parameter counts
# once; buffers are not parameters), optionally only the trainable ones (`requires_grad=True`).
# Then the closed formula for one encoder block, which you can check against your counter.

# %% id="16" nbgrader={"grade": false, "grade_id": "count_parameters", "locked": false, "schema_version": 3, "solution": true}
def count_parameters(module: nn.Module, trainable_only: bool = False) -> int:
    # docstring from attnlab.nn.params.count_parameters
    ### BEGIN SOLUTION
    if not isinstance(module, nn.Module):
        raise TypeError(f"count_parameters expects an nn.Module, got {type(module).__name__}")
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)
    ### END SOLUTION


# %% id="17" nbgrader={"grade": true, "grade_id": "test_count_parameters", "locked": true, "points": 1, "schema_version": 3, "solution": false}
n_lin = count_parameters(nn.Linear(3, 4))
assert isinstance(n_lin, int), f"return an int, got {type(n_lin).__name__}"
assert n_lin != 2, "count scalars (p.numel()), not parameter tensors"
assert n_lin == 16, "nn.Linear(3, 4) holds a 4×3 weight and 4 biases"


class Tied(nn.Module):  # embedding and read-out share one matrix, as in GPT-2
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 10, bias=False)
        self.head.weight = self.emb.weight
        self.norm = nn.LayerNorm(4)
        self.register_buffer("table", torch.zeros(7, 4))  # a buffer, not a parameter


tied = Tied()
n_tied = count_parameters(tied)
assert n_tied != 116, "you counted the state_dict: it holds buffers and lists a tied matrix twice; count module.parameters()"
assert n_tied != 76, "a buffer is not a parameter: count module.parameters() only"
assert n_tied != 88, "a tied (shared) parameter must count once"
assert count_parameters(tied) == 48, "the shared 10×4 matrix counts once (40) plus the LayerNorm's gain and bias (8)"
tied.norm.requires_grad_(False)
assert count_parameters(tied) == 48, "trainable_only=False counts frozen parameters too"
assert count_parameters(tied, trainable_only=True) == 40, "trainable_only=True must skip parameters with requires_grad=False"
print("count_parameters: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: count_parameters runs on fresh modules (tied, frozen and
# buffered parts) and is compared with the library's counter.
### END HIDDEN TESTS

# %% id="18" nbgrader={"grade": false, "grade_id": "count_block_parameters", "locked": false, "schema_version": 3, "solution": true}
def count_block_parameters(d_model: int, n_heads: int, d_ff: int, bias: bool = True) -> int:
    """Parameters of one encoder block, by formula (lesson 06), without building it.

    The block holds multi-head self-attention (W_Q, W_K, W_V, W_O, each d_model × d_model),
    the FFN (d_model × d_ff and d_ff × d_model) and two LayerNorms (a gain of d_model each).
    With ``bias=True`` every linear layer has a bias and every LayerNorm a bias (β) too.

    Args:
        d_model: model width; n_heads: number of heads (``d_model % n_heads == 0``);
        d_ff: FFN hidden width; bias: biases in linear layers and LayerNorms.

    Returns:
        int, equal to the parameter count of the block built with these settings.
    """
    ### BEGIN SOLUTION
    d = d_model
    attention = 4 * d * d + (4 * d if bias else 0)  # the head split does not change the count
    ffn = 2 * d * d_ff + ((d_ff + d) if bias else 0)
    norms = 2 * (d + (d if bias else 0))
    return attention + ffn + norms
    ### END SOLUTION


# %% id="19" nbgrader={"grade": true, "grade_id": "test_count_block_parameters", "locked": true, "points": 2, "schema_version": 3, "solution": false}
got = count_block_parameters(16, 2, 64)
assert isinstance(got, int), f"return an int, got {type(got).__name__}"
expected = library_count_parameters(EncoderBlock(16, 2, 64))
known = {
    "you forgot the output projection W_O": expected - (16 * 16 + 16),
    "you forgot the LayerNorms": expected - 4 * 16,
    "the attention count must not depend on n_heads (the heads split d_model, they do not multiply it)": expected + 4 * 16 * 16,
    "you left out the biases": expected - (4 * 16 + 64 + 16 + 2 * 16),
}
for mistake, wrong in known.items():
    assert got != wrong, mistake
assert got == expected, "the count differs from the block built with these settings; add attention, FFN and both LayerNorms"
assert count_block_parameters(16, 4, 64) == got, "the number of heads does not change the count"
no_bias = count_block_parameters(16, 2, 64, bias=False)
assert no_bias != got, "bias=False must drop the biases (linear layers and LayerNorm β)"
assert no_bias == library_count_parameters(EncoderBlock(16, 2, 64, bias=False)), \
    "bias=False: a LayerNorm keeps its gain γ but loses β; linear layers lose their biases"
print("count_block_parameters: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: count_block_parameters runs on fresh configurations (with
# and without biases) and is compared with the parameter count of the library's
# EncoderBlock built with those settings.
### END HIDDEN TESTS
