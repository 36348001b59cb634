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
# # Exercise 04 · Positional encoding
#
# Lesson 04 showed that self-attention cannot tell the order of its inputs (shuffling the tokens shuffles
# the outputs the same way) and fixed it by adding a position-dependent vector to every token, the sinusoidal
# encoding of Vaswani et al. 2017, §3.5:
#
# `PE[pos, 2i] = sin(pos / 10000^(2i / d_model))`, `PE[pos, 2i+1] = cos(pos / 10000^(2i / d_model))`.
#
# * Cells marked *answer* are yours; every other cell is locked.
# * Run the *check* cell under each answer: for code it tells you right away what is wrong (without giving the answer away); for numbers computed by hand it only says whether your answer can be read. To check your work as the grader does (your numbers, your code on its own inputs), save and run `attnlab check` on this notebook in a terminal (or `from attnlab.check import check; check()` in a cell).
# * Your numbers are personal: they come from your learner id, so a classmate's numbers will not match yours. The setup cell prints that id; it must be the id your course grades you under.
# * Graded: the two by-hand answers (1 point each), `sinusoidal_encoding` (3), `is_permutation_equivariant` (2),
#   and a short written answer (2, graded by your instructor). When your instructor grades, your functions also
#   run on fresh random inputs (and fresh layers) you have not seen.
# * Write your own code with plain tensor operations; importing the course library earns no credit.
#   Allowed imports: `math`, `numpy`, `torch`, `typing`, `functools`, `itertools`, `collections`,
#   `dataclasses`, `einops`.
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

from attnlab.nn import MultiHeadAttention, causal_mask
from attnlab.practice import gate
from attnlab.practice.problem import check_form, learner_note, show_problem

ASSIGNMENT = "04_positional_encoding"
gate("04")  # lists any lesson-04 skill you have not mastered yet; never blocks
print(learner_note())

# %% [markdown] id="2" nbgrader={"grade": false, "grade_id": "by_hand_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · By hand
#
# Work with pen and paper (or a calculator), then type **the numbers themselves** into the answer cell.
# Code that computes the answer is not accepted here.

# %% by-hand skill="pe_value" item="pe" variable="pe" ids="3 4 5"
# answer: pe = the value as a number (3 decimals)
# Graded outside your kernel: the number in `pe` is checked against your own variant.

# %% by-hand skill="permutation_effect" item="perm" variable="rows" ids="6 7 8"
# answer: rows = [r_0, r_1, ...], one row index of Y per row of Y'
# Graded outside your kernel: the numbers in `rows` are checked against your own variant.

# %% [markdown] id="9" nbgrader={"grade": false, "grade_id": "code_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · In code
#
# ### The sinusoidal table
#
# Build the whole `(L, d_model)` table at once, without a Python loop over positions: a column of positions
# `(L, 1)` times a row of frequencies `(1, d_model / 2)` gives every angle; sines go to the even columns,
# cosines to the odd ones. `base` is the 10000 of the formula. Reject an odd or non-positive `d_model` and a
# negative `L` with a `ValueError` that says what was wrong.

# %% id="10" nbgrader={"grade": false, "grade_id": "sinusoidal_encoding", "locked": false, "schema_version": 3, "solution": true}
def sinusoidal_encoding(L: int, d_model: int, base: float = 10000.0, device=None) -> Tensor:
    # docstring from attnlab.nn.positional.sinusoidal_encoding
    ### BEGIN SOLUTION
    if not isinstance(d_model, int) or d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be a positive even int (sines and cosines come in pairs), got {d_model!r}")
    if not isinstance(L, int) or L < 0:
        raise ValueError(f"L must be a non-negative int, got {L!r}")
    positions = torch.arange(L, dtype=torch.float32, device=device)[:, None]  # (L, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32, device=device)  # (d_model/2,)
    angles = positions / base ** (two_i / d_model)  # (L, 1) / (d_model/2,) -> (L, d_model/2)
    table = torch.zeros(L, d_model, device=device)  # (L, d_model)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table
    ### END SOLUTION


# %% id="11" nbgrader={"grade": true, "grade_id": "test_sinusoidal_encoding", "locked": true, "points": 3, "schema_version": 3, "solution": false}
pe_table = sinusoidal_encoding(6, 4)
assert isinstance(pe_table, torch.Tensor) and tuple(pe_table.shape) == (6, 4), \
    f"the table must be (L, d_model) = (6, 4), got {getattr(pe_table, 'shape', type(pe_table).__name__)}"
assert pe_table.dtype == torch.float32, f"return float32, got {pe_table.dtype}"
assert not torch.allclose(pe_table[0], torch.tensor([1.0, 0.0, 1.0, 0.0])), \
    "sine and cosine are swapped: even columns (0, 2, ...) hold the sines, odd columns the cosines"
assert not torch.allclose(pe_table[0], torch.tensor([0.0, 0.0, 1.0, 1.0])), \
    "sines and cosines must interleave (sin, cos, sin, cos), not fill the first and second halves"
assert torch.allclose(pe_table[0], torch.tensor([0.0, 1.0, 0.0, 1.0])), \
    "position 0 must be [sin 0, cos 0, sin 0, cos 0] = [0, 1, 0, 1]: row r of the table is position r, starting at 0"
assert not torch.allclose(pe_table[1, 1], torch.tensor(math.cos(1 / 10000 ** 0.25)), atol=1e-4), \
    "column 1 must share the frequency of column 0: the exponent uses the pair index 2i (2i = 0 for columns 0 and 1), not the column index"
assert torch.allclose(pe_table[1, :2], torch.tensor([math.sin(1.0), math.cos(1.0)]), atol=1e-4), \
    "columns 0 and 1 share the fastest frequency 1 / 10000^0 = 1: PE[1, 0] = sin(1), PE[1, 1] = cos(1)"
assert torch.allclose(pe_table[1, 2:], torch.tensor([math.sin(0.01), math.cos(0.01)]), atol=1e-5), \
    "columns 2 and 3 (i = 1) must use the angle pos / 10000^(2/4) = pos / 100; interleave sin, cos, sin, cos"
assert torch.allclose(pe_table.pow(2).view(6, 2, 2).sum(-1), torch.ones(6, 2)), "each (sin, cos) pair must lie on the unit circle"
assert torch.allclose(sinusoidal_encoding(3, 2, base=100.0), sinusoidal_encoding(3, 2)), \
    "with d_model = 2 only frequency 1 exists, whatever base is"
assert not torch.allclose(sinusoidal_encoding(3, 4, base=100.0), sinusoidal_encoding(3, 4)), "use the base argument"
for bad in ((4, 5), (4, 0), (-1, 4)):
    try:
        sinusoidal_encoding(*bad)
    except ValueError:
        pass
    else:
        raise AssertionError(f"sinusoidal_encoding{bad} must raise ValueError")
print("sinusoidal_encoding: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: sinusoidal_encoding runs for fresh (L, d_model, base)
# drawn at grading time and is compared with the reference by the grader; an odd
# d_model must raise ValueError.
### END HIDDEN TESTS

# %% [markdown] id="12" nbgrader={"grade": false, "grade_id": "equivariance_intro", "locked": true, "schema_version": 3, "solution": false}
# ### Testing permutation equivariance
#
# Turn the lesson's experiment into a reusable test. `layer` is any function `(B, L, d_model) -> (B, L, d_model)`.
# It is **permutation-equivariant** for a permutation `perm` of the L positions if running it on the shuffled
# sequence gives the shuffled output: `layer(x[:, perm]) ≈ layer(x)[:, perm]` (the lesson's
# `Attn(PX) = P Attn(X)`). Compare with `torch.allclose(..., atol=atol)`: the two sides are computed in a
# different order, so they agree only up to float rounding. Return a Python `bool`.
#
# The check cell then uses your function to show the lesson's claims: plain self-attention passes the test,
# and adding positional encodings, or a causal mask, breaks it.

# %% id="13" nbgrader={"grade": false, "grade_id": "is_permutation_equivariant", "locked": false, "schema_version": 3, "solution": true}
def is_permutation_equivariant(layer, x: Tensor, perm: Sequence[int], atol: float = 1e-5) -> bool:
    """Whether ``layer(x[:, perm])`` equals ``layer(x)[:, perm]`` up to ``atol`` (lesson 04, §1).

    Args:
        layer: a callable mapping ``(B, L, d_model)`` to ``(B, L, d_model)`` (sequence axis 1).
        x: ``(B, L, d_model)`` float input.
        perm: a permutation of ``range(L)``: row r of the shuffled sequence is row ``perm[r]``.
        atol: absolute tolerance of the comparison (float rounding differs between the two sides).

    Returns:
        ``True`` if shuffling the positions before the layer gives the same result as shuffling
        its output the same way, else ``False``.
    """
    ### BEGIN SOLUTION
    perm = list(perm)
    with torch.no_grad():
        shuffled_then_layer = layer(x[:, perm])  # (B, L, d_model)
        layer_then_shuffled = layer(x)[:, perm]  # (B, L, d_model)
    return bool(torch.allclose(shuffled_then_layer, layer_then_shuffled, atol=atol))
    ### END SOLUTION


# %% id="14" nbgrader={"grade": true, "grade_id": "test_is_permutation_equivariant", "locked": true, "points": 2, "schema_version": 3, "solution": false}
torch.manual_seed(0)
d_model = 8
mha = MultiHeadAttention(d_model, n_heads=2).eval()
x = torch.randn(2, 5, d_model)  # (B, L, d_model)
perm = [3, 0, 4, 1, 2]          # not its own inverse
attention = lambda t: mha(t)[0]                                                 # noqa: E731
with_positions = lambda t: mha(t + sinusoidal_encoding(t.shape[1], d_model))[0]  # noqa: E731
causal = lambda t: mha(t, attn_mask=causal_mask(t.shape[1]))[0]                 # noqa: E731
running_sum = lambda t: t.cumsum(dim=1)                                         # noqa: E731
answer = is_permutation_equivariant(attention, x, perm)
assert isinstance(answer, bool), f"return a Python bool (use bool(...)), got {type(answer).__name__}"
assert answer, ("plain self-attention must pass: compare layer(x[:, perm]) with layer(x)[:, perm] "
                "(the same permutation on both sides, along the sequence axis 1, with a tolerance)")
assert is_permutation_equivariant(lambda t: 2 * t + 1, x, perm), "a layer acting on every position alone must pass"
assert not is_permutation_equivariant(with_positions, x, perm), \
    "attention with positional encodings must fail the test: did you permute the batch axis (x[perm]) instead of the positions (x[:, perm])?"
assert not is_permutation_equivariant(causal, x, perm), "a causal mask treats positions differently: it must fail the test"
assert not is_permutation_equivariant(running_sum, x, perm), "a running sum over positions depends on the order: it must fail"
x_one = torch.randn(1, 5, d_model)
assert is_permutation_equivariant(attention, x_one, perm) and not is_permutation_equivariant(with_positions, x_one, perm), \
    "with a batch of one sequence the answers must not change"
print("is_permutation_equivariant: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: is_permutation_equivariant runs on fresh layers (with and
# without positions, masks and mixing), inputs and permutations drawn at grading time;
# its answers are compared with the grader's.
### END HIDDEN TESTS

# %% [markdown] id="15" nbgrader={"grade": false, "grade_id": "written_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3 · Written answer

# %% [markdown] id="16" nbgrader={"grade": true, "grade_id": "extrapolation", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **Extrapolation.** A model was trained on sequences of at most 512 tokens and is now given 2000. In four or
# five sentences: what happens with a **learned** position table of 512 rows, what happens with the
# **sinusoidal** table, and why "the formula is defined for every position" does not guarantee that the model
# works at position 1500. Name one design from the lesson that depends only on relative offsets.
#
# ### BEGIN SOLUTION
# A learned table simply has no row for positions 512 and beyond: the model cannot even be run on them without
# inventing vectors it never trained. The sinusoidal formula gives a well-defined vector for every position, and
# PE[p + k] is a fixed rotation of PE[p], so the encoding itself extrapolates in form. But the network was only
# trained on the combinations of angles that occur up to 512; the slow-frequency pairs reach angles it has never
# seen, and the attention patterns and later layers were fitted to the old range, so quality usually degrades
# beyond the training length. Rotary embeddings (RoPE) make the attention score depend only on the offset n − m
# between query and key, which is why they (and other relative schemes) extend more gracefully, though still not
# for free.
#
# **Rubric (2 points).** 1 point: a learned table has no rows beyond 512; the sinusoidal formula gives a vector
# for every position. 1 point: the network was fitted only to the positions (angle combinations) it saw, so
# being defined is not the same as working, and one relative design is named (RoPE, a relative position bias
# such as ALiBi or T5's). Half a point off if the answer claims sinusoids extrapolate for free.
# ### END SOLUTION
