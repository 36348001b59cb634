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
# # Exercise 01 · Routing and soft lookup
#
# Lesson 01 asked how information travels between two positions of a sequence (the **path length**) and
# replaced the exact-match dictionary with a **soft lookup**: score every key against a query, turn the scores
# into weights with a softmax, and average the values with those weights.
# Here you do both **by hand** on small numbers made for you, then **in code**.
#
# * Cells marked *answer* are yours; every other cell is locked.
# * Run the *check* cell under each answer: for code it tells you right away what is wrong (without giving the answer away); for numbers computed by hand it only says whether your answer can be read. To check your work as the grader does (your numbers, your code on its own inputs), save and run `attnlab check` on this notebook in a terminal (or `from attnlab.check import check; check()` in a cell).
# * Your numbers are personal: they come from your learner id, so a classmate's numbers will not match yours. The setup cell prints that id; it must be the id your course grades you under.
# * Graded: the three by-hand answers (1 point each), `path_lengths` (2), `apply_temperature` (1),
#   `soft_lookup` (2), `hard_lookup` (1), and a short written answer (2, graded by your instructor).
#   When your instructor grades, your functions also run on fresh random inputs you have not seen.
# * Write your own code with plain tensor operations. Importing the course library, or calling its attention
#   function inside `soft_lookup`, earns no credit. Allowed imports: `math`, `numpy`, `torch`, `typing`,
#   `functools`, `itertools`, `collections`, `dataclasses`, `einops`.
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

from attnlab.practice import gate
from attnlab.practice.problem import check_form, learner_note, show_problem

ASSIGNMENT = "01_routing_and_soft_lookup"
gate("01")  # lists any lesson-01 skill you have not mastered yet; never blocks
print(learner_note())

# %% [markdown] id="2" nbgrader={"grade": false, "grade_id": "by_hand_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · By hand
#
# Work with pen and paper (or a calculator), then type **the numbers themselves** into the answer cell,
# e.g. `[0.25, 0.5, 0.25]`. Code that computes the answer is not accepted here.
# In this lesson the match score is the **plain** dot product `q · k_j` (no division by √d_k yet: that is lesson 02).

# %% by-hand skill="soft_lookup_weights" item="weights" variable="weights" ids="3 4 5"
# answer: weights = [w_1, w_2, w_3], the three weights as numbers (2 decimals)
# Graded outside your kernel: the numbers in `weights` are checked against your own
# variant.

# %% by-hand skill="soft_lookup_output" item="output" variable="output" ids="6 7 8"
# answer: output = [o_1, o_2], the output of the lookup as numbers (2 decimals)
# Graded outside your kernel: the numbers in `output` are checked against your own
# variant.

# %% by-hand skill="path_lengths" item="paths" variable="paths" ids="9 10 11"
# answer: paths = [rnn_steps, cnn_layers, attention_layers], three integers
# Graded outside your kernel: the numbers in `paths` are checked against your own
# variant.

# %% [markdown] id="12" nbgrader={"grade": false, "grade_id": "code_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · In code
#
# ### Path lengths
#
# A sequence has `n` tokens. Count the sequential steps that information needs to travel from the **first** token
# to the **last** one (a distance of `n - 1` positions) in four architectures, as in lesson 01:
#
# 1. an RNN: one recurrent step per position;
# 2. a stack of causal convolutions with kernel size `k`: each layer reaches `k - 1` positions further back (count layers);
# 3. a stack of causal convolutions with kernel size `k` and dilations `1, k, k², ...`: after `m` layers the last
#    output sees the last `k**m` inputs (count layers);
# 4. self-attention: count layers.
#
# Use integer arithmetic: floating-point logarithms are sometimes a hair above a whole number
# (`math.log(125) / math.log(5)` is `3.0000000000000004`).

# %% id="13" nbgrader={"grade": false, "grade_id": "path_lengths", "locked": false, "schema_version": 3, "solution": true}
def path_lengths(n: int, k: int) -> list[int]:
    """Steps from the first to the last of ``n`` tokens in four architectures (lesson 01, §2).

    Args:
        n: number of tokens, an int >= 2 (the two ends are ``n - 1`` positions apart).
        k: convolution kernel size, an int >= 2.

    Returns:
        ``[rnn, cnn, dilated_cnn, attention]``, four ints: recurrent steps of an RNN, layers of a
        stack of causal convolutions with kernel ``k``, layers of the same stack with dilations
        ``1, k, k², ...``, and layers of self-attention.
    """
    ### BEGIN SOLUTION
    rnn = n - 1  # one step per position of distance
    cnn = 0
    while 1 + cnn * (k - 1) < n:  # reach of m layers: 1 + m (k - 1) positions
        cnn += 1
    dilated = 0
    while k ** dilated < n:  # reach of m dilated layers: k^m positions
        dilated += 1
    return [rnn, cnn, dilated, 1]
    ### END SOLUTION


# %% id="14" nbgrader={"grade": true, "grade_id": "test_path_lengths", "locked": true, "points": 2, "schema_version": 3, "solution": false}
res = path_lengths(8, 3)
assert isinstance(res, (list, tuple)) and len(res) == 4, "return a list of four ints [rnn, cnn, dilated_cnn, attention]"
assert all(isinstance(r, int) for r in res), f"every entry must be an int, got {[type(r).__name__ for r in res]}"
assert res[3] == 1, "self-attention connects any two positions in a single layer"
assert res[0] != 8, "the RNN count: 8 tokens are 7 steps apart (count steps between tokens, not tokens)"
assert res[0] == 7, "an RNN moves one position per recurrent step"
assert res[1] != 3, "the convolution count: round the number of layers up, not down (a partial reach is not enough)"
assert res[1] == 4, "8 tokens with kernel 3: the lesson's figure needs 4 layers (reach 1 + 4·2 = 9 >= 8)"
assert res[2] == 2, "with dilations 1, 3, 9, ... two layers already reach 3² = 9 >= 8 tokens"
assert path_lengths(125, 5)[2] == 3, "125 = 5³ tokens need exactly 3 dilated layers: count with integers, not math.log"
assert path_lengths(2, 2) == [1, 1, 1, 1], "two neighbouring tokens are one step apart in every architecture"
print("path_lengths: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: path_lengths runs on fresh (n, k) pairs drawn at grading
# time (including exact powers of k) and is compared with an exact count by the grader.
### END HIDDEN TESTS

# %% [markdown] id="15" nbgrader={"grade": false, "grade_id": "lookup_intro", "locked": true, "schema_version": 3, "solution": false}
# ### Soft lookup with a temperature
#
# The lesson's slider showed that a longer query sharpens the lookup, like a lower softmax **temperature**.
# Make the temperature explicit: divide the scores by `temperature` before the softmax. First the division
# itself (a temperature must be positive: say so clearly when it is not), then the soft lookup, then the hard
# lookup it smooths. Shapes: `query: (..., L, d_k)`, `keys: (..., S, d_k)`, `values: (..., S, d_v)`; any leading
# axes broadcast. The checks use the lesson's worked example `Q = [2, 0, 1]ᵀ`, `K = [1, 3, -1]ᵀ`, `V = [10, 20, 30]ᵀ`.

# %% id="16" nbgrader={"grade": false, "grade_id": "apply_temperature", "locked": false, "schema_version": 3, "solution": true}
def apply_temperature(logits: Tensor, temperature: float) -> Tensor:
    # docstring from attnlab.nn.sampling.apply_temperature
    ### BEGIN SOLUTION
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}; a hard lookup (argmax) is the T -> 0 limit")
    return logits / temperature
    ### END SOLUTION


# %% id="17" nbgrader={"grade": true, "grade_id": "test_apply_temperature", "locked": true, "points": 1, "schema_version": 3, "solution": false}
z = torch.tensor([[2.0, 6.0, -2.0]])
assert torch.allclose(apply_temperature(z, 1.0), z), "temperature 1 must leave the logits unchanged"
assert not torch.allclose(apply_temperature(z, 2.0), z * 2), "divide by the temperature, do not multiply"
assert torch.allclose(apply_temperature(z, 2.0), torch.tensor([[1.0, 3.0, -1.0]])), "temperature 2 must halve every logit"
for bad in (0.0, -1.0):
    try:
        apply_temperature(z, bad)
    except ValueError:
        pass
    else:
        raise AssertionError(f"temperature={bad} must raise ValueError (a temperature must be > 0)")
print("apply_temperature: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: apply_temperature runs on fresh random logits and
# temperatures; the grader also checks that a temperature <= 0 raises ValueError.
### END HIDDEN TESTS

# %% id="18" nbgrader={"grade": false, "grade_id": "soft_lookup", "locked": false, "schema_version": 3, "solution": true}
def soft_lookup(query: Tensor, keys: Tensor, values: Tensor, temperature: float = 1.0) -> tuple[Tensor, Tensor]:
    """Soft dictionary lookup: softmax(q · k_j / temperature) weights, then the weighted average of the values.

    The differentiable replacement for an exact-match lookup (lesson 01, §4). The score of
    key j is the plain dot product ``q · k_j`` (no 1/√d_k; scaled attention is lesson 02).

    Args:
        query: ``(..., L, d_k)`` float, one query per row.
        keys: ``(..., S, d_k)`` float, one key per row; leading axes broadcast with ``query``'s.
        values: ``(..., S, d_v)`` float, the value stored with each key.
        temperature: > 0; below 1 sharpens the weights towards a hard lookup, above 1 flattens them.

    Returns:
        ``(output, weights)``: ``output`` ``(..., L, d_v)``, each row a convex combination of the
        value rows; ``weights`` ``(..., L, S)``, each row non-negative and summing to 1.

    Raises:
        ValueError: if ``temperature <= 0``.
    """
    ### BEGIN SOLUTION
    scores = query @ keys.transpose(-2, -1)  # (..., L, d_k) @ (..., d_k, S) -> (..., L, S)
    scores = apply_temperature(scores, temperature)
    scores = scores - scores.max(dim=-1, keepdim=True).values  # stable exp
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)  # (..., L, S), softmax over the keys
    return weights @ values, weights  # (..., L, S) @ (..., S, d_v) -> (..., L, d_v)
    ### END SOLUTION


# %% id="19" nbgrader={"grade": true, "grade_id": "test_soft_lookup", "locked": true, "points": 2, "schema_version": 3, "solution": false}
Q = torch.tensor([[2.0], [0.0], [1.0]])    # (L=3, d_k=1)
K = torch.tensor([[1.0], [3.0], [-1.0]])   # (S=3, d_k=1)
V = torch.tensor([[10.0], [20.0], [30.0]]) # (S=3, d_v=1)
result = soft_lookup(Q, K, V)
assert isinstance(result, tuple) and len(result) == 2, "return a pair (output, weights)"
out, w = result
assert tuple(out.shape) == (3, 1) and tuple(w.shape) == (3, 3), \
    f"output must be (L, d_v) = (3, 1) and weights (L, S) = (3, 3); got {tuple(out.shape)} and {tuple(w.shape)}"
assert torch.allclose(w.sum(dim=-1), torch.ones(3), atol=1e-5), \
    "each row of the weights must sum to 1: the softmax runs over the keys (the last axis)"
assert not torch.allclose(out, torch.tensor([[28.36], [20.90], [10.74]]), atol=0.01), \
    "the softmax ran over the queries instead of the keys"
assert torch.allclose(w[1], torch.full((3,), 1 / 3), atol=1e-4), "query 0 scores every key 0: its weights must be uniform"
assert torch.allclose(w[0], torch.tensor([0.0180, 0.9817, 0.0003]), atol=1e-3), \
    "query [2] against keys [1, 3, -1]: scores 2, 6, -2 and weights ≈ [0.018, 0.982, 0.000] (plain dot products, no √d_k)"
assert torch.allclose(out, torch.tensor([[19.82], [20.0], [18.99]]), atol=0.01), \
    "the output must be the weighted average of the value rows: weights @ values"
out2, w2 = soft_lookup(Q, K, V, temperature=2.0)
assert not torch.allclose(w2, w), "the temperature changed nothing: divide the scores by it before the softmax"
assert torch.allclose(w2[0], torch.tensor([0.1173, 0.8668, 0.0159]), atol=1e-3), \
    "temperature 2 must flatten the weights (scores / 2), not sharpen them"
w4 = soft_lookup(torch.ones(1, 4), torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]), torch.eye(2))[1]
assert not torch.allclose(w4, torch.tensor([[0.6225, 0.3775]]), atol=1e-3), \
    "with d_k = 4 your scores were divided by √d_k: in a soft lookup the score is the plain dot product q · k_j (scaling is lesson 02)"
assert torch.allclose(w4, torch.tensor([[0.7311, 0.2689]]), atol=1e-3), "scores 1 and 0 must give weights ≈ [0.731, 0.269]"
big = soft_lookup(torch.tensor([[100.0]]), K, V)[0]
assert torch.isfinite(big).all(), "large scores overflowed exp: subtract the row maximum before exponentiating"
bo, bw = soft_lookup(torch.zeros(2, 4, 3), torch.zeros(2, 5, 3), torch.zeros(2, 5, 6))
assert tuple(bo.shape) == (2, 4, 6) and tuple(bw.shape) == (2, 4, 5), \
    f"leading axes must broadcast: expected (2, 4, 6) and (2, 4, 5), got {tuple(bo.shape)} and {tuple(bw.shape)}"
print("soft_lookup: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: soft_lookup runs on fresh random queries, keys, values
# and temperatures, and output and weights are compared with the reference by the grader.
### END HIDDEN TESTS

# %% id="20" nbgrader={"grade": false, "grade_id": "hard_lookup", "locked": false, "schema_version": 3, "solution": true}
def hard_lookup(query: Tensor, keys: Tensor, values: Tensor) -> Tensor:
    """Hard lookup: each query returns the value of its best-scoring key (argmax of q · k_j).

    The T -> 0 limit of :func:`soft_lookup`; it has zero gradient with respect to the query
    almost everywhere (lesson 01, §4).

    Args:
        query: ``(..., L, d_k)`` float.
        keys: ``(..., S, d_k)`` float; leading axes broadcast with ``query``'s.
        values: ``(..., S, d_v)`` float.

    Returns:
        ``(..., L, d_v)``: row i is the value row of the key with the largest score ``q_i · k_j``.
    """
    ### BEGIN SOLUTION
    scores = query @ keys.transpose(-2, -1)  # (..., L, S)
    best = scores.argmax(dim=-1)  # (..., L) index of the winning key
    one_hot = (torch.arange(keys.shape[-2]) == best[..., None]).to(values.dtype)  # (..., L, S)
    return one_hot @ values  # (..., L, d_v)
    ### END SOLUTION


# %% id="21" nbgrader={"grade": true, "grade_id": "test_hard_lookup", "locked": true, "points": 1, "schema_version": 3, "solution": false}
h = hard_lookup(Q[[0, 2]], K, V)  # queries [2] and [1]: both prefer key [3]
assert isinstance(h, torch.Tensor) and tuple(h.shape) == (2, 1), \
    f"hard_lookup must return (L, d_v) = (2, 1), got {getattr(h, 'shape', type(h).__name__)}"
assert not torch.allclose(h, torch.tensor([[30.0], [30.0]])), "you picked the key with the smallest score: use argmax"
assert torch.allclose(h, torch.tensor([[20.0], [20.0]])), "each query must return the value of its best-scoring key"
h_neg = hard_lookup(torch.tensor([[-1.0]]), K, V)
assert torch.allclose(h_neg, torch.tensor([[30.0]])), "a negative query prefers the key -1 (score +1): compare scores q · k_j"
hb = hard_lookup(torch.zeros(2, 4, 3), torch.zeros(2, 5, 3), torch.zeros(2, 5, 6))
assert tuple(hb.shape) == (2, 4, 6), f"leading axes must broadcast: expected (2, 4, 6), got {tuple(hb.shape)}"
print("hard_lookup: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: hard_lookup runs on fresh random inputs and is compared
# with the reference by the grader.
### END HIDDEN TESTS

# %% [markdown] id="22" nbgrader={"grade": false, "grade_id": "written_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3 · Written answer

# %% [markdown] id="23" nbgrader={"grade": true, "grade_id": "agreement_trap", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **The agreement trap.** *"The keys to the cabinet near the door ___ on the table."* In four or five sentences:
# which verb belongs in the blank and why, what a model that mostly trusts the most recent words would predict,
# how the path length between "keys" and the blank differs in an RNN and in self-attention, and how a soft lookup
# (query, keys, values) can get the agreement right.
#
# ### BEGIN SOLUTION
# The blank takes "are": the subject is "keys", which is plural; "cabinet" and "door" only sit inside the
# prepositional phrases that modify it. The two nouns closest to the blank are singular, so a model that mostly
# trusts recent words predicts "is". In an RNN the number of "keys" must survive six recurrent steps, each of
# which can overwrite or blur it, and the gradient that would teach the model to keep it must flow back through
# the same six steps; in self-attention the blank reads "keys" directly in one step, whatever the distance.
# A soft lookup lets the blank's query ask "where is my subject?": if the key of "keys" matches that query best,
# most of the weight goes to it and the output carries its value (plural), while the nearby singular nouns get
# little weight. Because the weights are a softmax, the model can learn this choice by gradient descent.
#
# **Rubric (2 points).** 1 point: "are", because the subject is the plural "keys" (the nearby singular
# nouns are inside the modifying phrases), and a recency-biased model would say "is". 1 point: the path length
# (RNN: one recurrent step per word in between, each able to blur the number; self-attention: one step whatever
# the distance) and how a query that matches the key of "keys" puts most of the weight on its (plural) value.
# Half a point off for each part that is stated without its reason.
# ### END SOLUTION
