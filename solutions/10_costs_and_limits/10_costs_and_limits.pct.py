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
# # Exercise 10 · Costs and limits
#
# Lesson 10 put numbers on what attention costs: the `L × L` weights in memory, the FLOPs of the two matrix products,
# the KV cache during generation, and the parameters of a model. Here you compute them, by hand on a configuration made
# for you and then as small functions, and you explain one limit of attention in words.
#
# * Cells marked *answer* are yours; every other cell is locked.
# * Run the *check* cell under each answer: for code it tells you right away what is wrong (without giving the answer away); for numbers computed by hand it only says whether your answer can be read. To check your work as the grader does (your numbers, your code on its own inputs), save and run `attnlab check` on this notebook in a terminal (or `from attnlab.check import check; check()` in a cell).
# * Your by-hand numbers are personal: they come from your learner id, so a classmate's numbers will not match yours.
# * Graded (9 points): the two by-hand answers (1 point each), `attention_score_bytes` (1), `kv_cache_bytes` (1),
#   `mha_flops` (2), `count_parameters` (1), and a written answer (2, graded by your instructor). When your instructor
#   grades, your functions also run on fresh inputs you have not seen.
# * Write your own code: importing the course library (`attnlab`) in an answer cell, using `exec`, `eval`, `open`,
#   `os`, `sys`, or a FLOP counter earns no credit. Answer cells may use `math`, `torch`, `numpy`.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import math

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode
from IPython.display import Markdown, display

from attnlab.nn import GPT, GPTConfig, KVCache, MultiHeadAttention
from attnlab.practice import gate
from attnlab.practice.problem import check_form, learner_note, show_problem

ASSIGNMENT = "10_costs_and_limits"
gate("10")  # lists any lesson-10 skill you have not mastered yet; never blocks
print(learner_note())

# %% [markdown] nbgrader={"grade": false, "grade_id": "by_hand_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · By hand
#
# Exact integers, typed as numbers (e.g. `12582912`, or `12_582_912`); code that computes them is not accepted here.

# %% by-hand skill="attention_memory" item="memory" variable="weight_bytes"
# answer: the number of bytes, an integer
# Graded outside your kernel: `weight_bytes` is checked against your own variant.

# %% by-hand skill="attention_flops" item="flops" variable="flops"
# answer: the number of FLOPs, an integer
# Graded outside your kernel: `flops` is checked against your own variant.

# %% [markdown] nbgrader={"grade": false, "grade_id": "code_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · Cost functions
#
# Each function returns a Python `int`. The check cells compare them with what PyTorch actually allocates or counts
# on small cases, so the formulas must be exact (no big-O constants dropped).
#
# **Memory of the attention weights.** Self-attention over `L` tokens materialises one `(B, H, L, L)` tensor of weights
# per layer (and the scores before the softmax have the same size).

# %% nbgrader={"grade": false, "grade_id": "attention_score_bytes", "locked": false, "schema_version": 3, "solution": true}
def attention_score_bytes(B: int, H: int, L: int, dtype_bytes: int) -> int:
    """Bytes of one ``(B, H, L, L)`` tensor of attention scores or weights.

    Args:
        B: batch size. H: number of heads. L: sequence length (queries = keys = L).
        dtype_bytes: bytes per number (4 for float32, 2 for float16/bfloat16).

    Returns:
        int, the number of bytes.
    """
    ### BEGIN SOLUTION
    return B * H * L * L * dtype_bytes  # one number per (batch, head, query, key)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_attention_score_bytes", "locked": true, "points": 1, "schema_version": 3, "solution": false}
got = attention_score_bytes(2, 3, 5, 4)
assert isinstance(got, int), f"return an int, got {type(got).__name__}"
w = torch.softmax(torch.randn(2, 3, 5, 4) @ torch.randn(2, 3, 4, 5), dim=-1)  # real (B=2, H=3, L=5, L=5) weights
assert got == w.numel() * w.element_size(), \
    "attention_score_bytes(2, 3, 5, 4) differs from the bytes of a real (2, 3, 5, 5) float32 tensor"
assert attention_score_bytes(1, 1, 20, 2) == 4 * attention_score_bytes(1, 1, 10, 2), \
    "doubling L must quadruple the memory: every query has a weight for every key"
assert attention_score_bytes(1, 8, 10, 2) == 8 * attention_score_bytes(1, 1, 10, 2), "every head has its own weights"
print("attention_score_bytes: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: attention_score_bytes runs on fresh configurations and is
# compared with the reference by the grader.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "kv_intro", "locked": true, "schema_version": 3, "solution": false}
# **Memory of the KV cache.** During generation every layer keeps the keys and the values of the `t` tokens seen so far,
# for all heads together (`d_model` numbers per token for K, as many for V).

# %% nbgrader={"grade": false, "grade_id": "kv_cache_bytes", "locked": false, "schema_version": 3, "solution": true}
def kv_cache_bytes(n_layers: int, B: int, t: int, d_model: int, bytes_per: int) -> int:
    """Bytes held by the KV cache of a decoder after ``t`` positions.

    Args:
        n_layers: decoder layers (one cache each). B: batch size. t: cached positions.
        d_model: model width (all heads of K, or of V, together). bytes_per: bytes per number.

    Returns:
        int, the number of bytes of all cached keys and values.
    """
    ### BEGIN SOLUTION
    return 2 * n_layers * B * t * d_model * bytes_per  # 2: keys and values
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_kv_cache_bytes", "locked": true, "points": 1, "schema_version": 3, "solution": false}
torch.manual_seed(0)
small = GPT(GPTConfig(vocab_size=13, block_size=16, d_model=12, n_heads=3, n_layers=2)).eval()
caches = [KVCache() for _ in small.blocks]
with torch.no_grad():
    small(torch.randint(13, (2, 7)), caches=caches)  # B = 2 sequences of t = 7 tokens, float32
stored = sum(c.k.numel() * c.k.element_size() + c.v.numel() * c.v.element_size() for c in caches)
got = kv_cache_bytes(2, 2, 7, 12, 4)
assert isinstance(got, int), f"return an int, got {type(got).__name__}"
assert got != stored // 2, "you counted only the keys (or only the values): the cache holds both"
assert got == stored, "kv_cache_bytes(2, 2, 7, 12, 4) differs from the bytes a real 2-layer GPT caches for B=2, t=7"
assert kv_cache_bytes(4, 2, 7, 12, 4) == 2 * got, "every layer has its own cache"
print("kv_cache_bytes: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: kv_cache_bytes runs on fresh configurations and is compared
# with the reference by the grader.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "flops_intro", "locked": true, "schema_version": 3, "solution": false}
# **FLOPs of multi-head attention.** Count the matrix products of one `MultiHeadAttention` forward with `L` queries
# attending `S` keys/values (self-attention is `S = L`): the four projections `W_Q, W_K, W_V, W_O` (`d_model → d_model`)
# and the two attention products `Q Kᵀ` and `A V` of every head. A product of an `(m, n)` and an `(n, p)` matrix costs
# `2·m·n·p` FLOPs (one multiply-add = 2 FLOPs). Ignore biases, the `1/√d_k` scale and the softmax.
# Think about what the number of heads does to the count before you write the code.

# %% nbgrader={"grade": false, "grade_id": "mha_flops", "locked": false, "schema_version": 3, "solution": true}
def mha_flops(B: int, L: int, S: int, d_model: int, n_heads: int) -> int:
    """FLOPs of the matrix products in one multi-head attention forward.

    Args:
        B: batch size. L: number of queries. S: number of keys/values.
        d_model: model width. n_heads: number of heads (``d_k = d_model // n_heads``).

    Returns:
        int: projections (queries from ``L`` tokens, keys and values from ``S`` tokens, output
        from ``L`` tokens) plus ``Q Kᵀ`` and ``A V`` of all heads, 2 FLOPs per multiply-add.
    """
    ### BEGIN SOLUTION
    d_k = d_model // n_heads
    projections = 2 * B * L * d_model * d_model * 2 + 2 * B * S * d_model * d_model * 2  # W_Q, W_O on L; W_K, W_V on S
    attention = n_heads * (2 * B * L * d_k * S + 2 * B * L * S * d_k)  # Q Kᵀ and A V per head
    return projections + attention
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_mha_flops", "locked": true, "points": 2, "schema_version": 3, "solution": false}
def measured_flops(B, L, S, d_model, n_heads):
    mha = MultiHeadAttention(d_model, n_heads)
    with FlopCounterMode(display=False) as counter:
        mha(torch.randn(B, L, d_model), torch.randn(B, S, d_model), torch.randn(B, S, d_model), need_weights=True)
    return counter.get_total_flops()


got = mha_flops(1, 4, 4, 8, 2)
assert isinstance(got, int), f"return an int, got {type(got).__name__}"
assert got > 0, "the count must be positive"
assert mha_flops(1, 4, 4, 8, 1) == mha_flops(1, 4, 4, 8, 4), \
    "the number of heads must not change the count: H heads of width d_model/H do the work of one head of width d_model"
assert got == measured_flops(1, 4, 4, 8, 2), "mha_flops(1, 4, 4, 8, 2) differs from the FLOPs torch counts for that call"
assert mha_flops(2, 3, 6, 12, 3) == measured_flops(2, 3, 6, 12, 3), \
    "cross-attention (L = 3 queries, S = 6 keys) is counted wrong: which projections run on the L tokens, which on the S?"
print("mha_flops: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: mha_flops runs on fresh configurations (self- and
# cross-attention) and is compared with torch's FlopCounterMode on attnlab's MultiHeadAttention.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "params_intro", "locked": true, "schema_version": 3, "solution": false}
# **Parameters.** Same name, signature and contract as `attnlab.nn.count_parameters`. Two traps: a weight shared by two
# layers (tied embedding and output layer) is one tensor and counts once, and buffers (e.g. a stored mask) are not parameters.

# %% nbgrader={"grade": false, "grade_id": "count_parameters", "locked": false, "schema_version": 3, "solution": true}
def count_parameters(module: nn.Module, trainable_only: bool = False) -> int:
    # docstring from attnlab.nn.params.count_parameters
    ### BEGIN SOLUTION
    if not isinstance(module, nn.Module):
        raise TypeError(f"count_parameters expects an nn.Module, got {type(module).__name__}")
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)  # each tensor once
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_count_parameters", "locked": true, "points": 1, "schema_version": 3, "solution": false}
lin = nn.Linear(3, 4)
assert count_parameters(lin) == 16, "nn.Linear(3, 4) has a (4, 3) weight and a (4,) bias"
gpt = GPT(GPTConfig(vocab_size=20, block_size=8, d_model=8, n_heads=2, n_layers=1))
untied = sum(p.numel() for p in gpt.state_dict().values())
assert count_parameters(gpt) != untied, "the GPT's output layer shares the token-embedding matrix: count it once"
assert count_parameters(gpt) == sum(p.numel() for p in gpt.parameters()), "your count differs on a small GPT"
lin.bias.requires_grad_(False)
assert count_parameters(lin, trainable_only=True) == 12, "trainable_only=True must skip parameters with requires_grad=False"
assert count_parameters(lin) == 16, "by default frozen parameters count too"
print("count_parameters: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: count_parameters runs on fresh modules (tied weights,
# buffers, frozen parts) and is compared with attnlab.nn.count_parameters.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "written_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3 · Written answer

# %% [markdown] nbgrader={"grade": true, "grade_id": "weights_not_explanations", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **Attention weights are not explanations.** A classmate shows a heatmap of one head's attention weights and says:
# "the model predicted *her* because it looked at *Juliet*; the weight is 0.9". In four to six sentences, give at least
# two concrete reasons why a large attention weight does not show that a token *caused* the prediction, and name one
# test that would give better evidence.
#
# ### BEGIN SOLUTION
# A weight says how much of a key's *value vector* is mixed into one head's output, not how much that value matters:
# if the value is small or is cancelled by the output projection W_O, a weight of 0.9 can change the prediction very
# little. The heatmap shows one head of one layer, while the prediction comes from all heads and layers plus the
# residual stream, which carries the token's own information past every attention layer; after the first layer a
# position's vector already mixes many tokens, so "the Juliet position" no longer holds only Juliet. Different weight
# patterns can also lead to the same output (Jain & Wallace 2019 found alternative attention distributions with nearly
# unchanged predictions), so the pattern we see is not the only one consistent with the decision. Better evidence is
# causal: change or remove the token (or ablate the head, or patch its activations from another input) and measure how
# much the predicted probability of "her" moves; gradient-based attributions are a cheaper complement.
#
# **Rubric (2 points).** 1 point: at least two concrete reasons, e.g. a weight scales a value vector that may be
# small or cancelled by W_O; one head of one layer is not the whole computation (other heads, layers, the
# residual stream); after layer 1 a position mixes many tokens; other weight patterns give the same output
# (Jain & Wallace 2019). 1 point: a causal test is named, e.g. remove or change the token, ablate or patch the
# head, and measure how the probability of "her" moves.
# ### END SOLUTION
