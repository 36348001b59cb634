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
# # Exercise 08 · Training and decoding
#
# Lesson 08 trained a language model with **teacher forcing** (the target at every position is the next token) and
# turned its logits back into text with greedy decoding, top-k and top-p sampling, and a **KV cache**.
# Here you build those pieces yourself.
#
# * Cells marked *answer* are yours; every other cell is locked.
# * Run the *check* cell under each answer: for code it tells you right away what is wrong (without giving the answer away); for numbers computed by hand it only says whether your answer can be read. To check your work as the grader does (your numbers, your code on its own inputs), save and run `attnlab check` on this notebook in a terminal (or `from attnlab.check import check; check()` in a cell).
# * Your by-hand numbers are personal: they come from your learner id, so a classmate's numbers will not match yours.
# * Graded (12 points): the two by-hand answers (1 point each), `shift_targets` (1), `next_token_loss` (2),
#   `greedy_decode` (2), `top_k_filter` (1), `top_p_filter` (2) and `attend_with_cache` (2).
#   When your instructor grades, your functions also run on fresh random inputs you have not seen
#   (`greedy_decode` on small random GPTs built by the grader).
# * Write your own code with plain tensor operations. Importing the course library (`attnlab`) in an answer cell,
#   calling the library version of what you are asked to write (`F.cross_entropy` inside `next_token_loss`,
#   `model.generate` inside `greedy_decode`, ...), or using `exec`, `eval`, `open`, `os`, `sys` earns no credit.
#   Answer cells may use `math`, `torch`, `numpy` and the functions of earlier answer cells.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import math

import torch
import torch.nn.functional as F
from torch import Tensor
from IPython.display import Markdown, display

from attnlab.nn import GPT, GPTConfig
from attnlab.practice import gate
from attnlab.practice.problem import check_form, learner_note, show_problem

ASSIGNMENT = "08_training_and_decoding"
gate("08")  # lists any lesson-08 skill you have not mastered yet; never blocks
print(learner_note())

# %% [markdown] nbgrader={"grade": false, "grade_id": "part1_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · Teacher forcing
#
# A training window of a token stream gives the model its input `x` and, at every position `t`, the target
# `y[t] = x[t + 1]`: the next token. First by hand (type **the numbers themselves**, e.g. `[3, 1, 4]`), then in code.

# %% by-hand skill="next_token_targets" item="targets" variable="y"
# answer: the targets y, a list of token ids
# Graded outside your kernel: the numbers in `y` are checked against your own variant.

# %% [markdown] nbgrader={"grade": false, "grade_id": "shift_intro", "locked": true, "schema_version": 3, "solution": false}
# `shift_targets` cuts a batch of windows of `T + 1` tokens into the model's inputs and targets.

# %% nbgrader={"grade": false, "grade_id": "shift_targets", "locked": false, "schema_version": 3, "solution": true}
def shift_targets(idx: Tensor) -> tuple[Tensor, Tensor]:
    """Inputs and next-token targets of windows of ``T + 1`` tokens (teacher forcing).

    Args:
        idx: ``(B, T + 1)`` long token ids.

    Returns:
        ``x, y``: ``(B, T)`` long each; position ``t`` of ``x`` is trained to predict
        ``y[:, t]``, the token that follows it in ``idx``.
    """
    ### BEGIN SOLUTION
    return idx[:, :-1], idx[:, 1:]  # (B, T) inputs, (B, T) targets = inputs shifted left by one
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_shift_targets", "locked": true, "points": 1, "schema_version": 3, "solution": false}
ids = torch.tensor([[5, 8, 1, 9, 2], [7, 7, 3, 0, 4]])  # (B=2, T+1=5)
result = shift_targets(ids)
assert isinstance(result, tuple) and len(result) == 2, "return a pair (x, y)"
x_s, y_s = result
assert tuple(x_s.shape) == (2, 4) and tuple(y_s.shape) == (2, 4), \
    f"x and y must both have shape (B, T) = (2, 4), got {tuple(x_s.shape)} and {tuple(y_s.shape)}"
assert not torch.equal(x_s, y_s), "x and y are equal: the targets must be the inputs shifted by one position"
assert torch.equal(x_s[:, 0], ids[:, 0]), "x must start with the first token of each window"
assert torch.equal(x_s[:, 1:], y_s[:, :-1]), "y[t] must be the token that FOLLOWS x[t] (shift left, not right)"
print("shift_targets: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: shift_targets runs on fresh random windows and is compared
# with the reference by the grader.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "loss_intro", "locked": true, "schema_version": 3, "solution": false}
# The training loss is the mean, over all `B · T` positions, of `-log p(y[b, t] | x[b, ≤ t])`, where the
# probabilities are the softmax of the logits over the vocabulary. Write it with `log_softmax` (or your own
# stable log-sum-exp) and indexing; `F.cross_entropy` and `F.nll_loss` are the library versions and earn no credit.

# %% nbgrader={"grade": false, "grade_id": "next_token_loss", "locked": false, "schema_version": 3, "solution": true}
def next_token_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean next-token cross-entropy (nats per token) of a batch.

    Args:
        logits: ``(B, T, V)`` float, the model's scores at every position.
        targets: ``(B, T)`` long, the next token at every position.

    Returns:
        A scalar tensor: the mean over all ``B * T`` positions of ``-log softmax(logits)[target]``.
    """
    ### BEGIN SOLUTION
    log_probs = logits.log_softmax(dim=-1)  # (B, T, V)
    picked = log_probs.gather(-1, targets[..., None]).squeeze(-1)  # (B, T): log p(correct next token)
    return -picked.mean()
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_next_token_loss", "locked": true, "points": 2, "schema_version": 3, "solution": false}
V = 5
flat = next_token_loss(torch.zeros(2, 3, V), torch.zeros(2, 3, dtype=torch.long))
assert flat.dim() == 0, f"return a scalar (0-d tensor), got shape {tuple(flat.shape)}"
assert flat.item() > 0, "the loss must be positive: it is MINUS the mean log-probability"
assert abs(flat.item() - math.log(V)) < 1e-4, \
    f"equal logits give every token probability 1/V, so the loss must be ln V = {math.log(V):.4f}, got {flat.item():.4f}" \
    " (did you sum instead of averaging?)"
g = torch.Generator().manual_seed(0)
logits_demo = torch.randn(2, 3, V, generator=g)
targets_demo = torch.randint(V, (2, 3), generator=g)
loss_demo = next_token_loss(logits_demo, targets_demo)
assert abs(loss_demo.item() - F.cross_entropy(logits_demo.reshape(-1, V), targets_demo.reshape(-1)).item()) < 1e-5, \
    "your loss differs from the mean cross-entropy on random logits: average -log p(target) over ALL B·T positions"
confident = torch.full((1, 2, V), -10.0)
confident[0, 0, 1] = confident[0, 1, 3] = 10.0
assert next_token_loss(confident, torch.tensor([[1, 3]])).item() < 1e-3, \
    "a model sure of the right token must get a loss close to 0: take the log-probability of the TARGET token"
assert next_token_loss(confident, torch.tensor([[3, 1]])).item() > 10, \
    "a model sure of the wrong token must get a large loss"
gpt = GPT(GPTConfig(vocab_size=V, block_size=8, d_model=16, n_heads=2, n_layers=1))
_, loss_gpt = gpt(targets_demo, targets_demo)
logits_gpt, _ = gpt(targets_demo)
assert abs(next_token_loss(logits_gpt, targets_demo).item() - loss_gpt.item()) < 1e-5, \
    "your loss differs from the one GPT(idx, targets) returns on the same logits and targets"
print("next_token_loss: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: next_token_loss runs on fresh random logits and targets and is
# compared with the cross-entropy computed by the grader.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "part2_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · Decoding
#
# **Greedy decoding** appends the most probable next token, one step at a time. `model(idx)` returns
# `(logits, loss)` like `attnlab.nn.GPT`, with `logits: (B, t, V)`; the model accepts at most
# `model.config.block_size` tokens, so feed it only the last `block_size` tokens of the text so far.
# Your function is graded on small random GPTs, so it must not depend on anything but `model(...)` and
# `model.config.block_size`.

# %% nbgrader={"grade": false, "grade_id": "greedy_decode", "locked": false, "schema_version": 3, "solution": true}
@torch.no_grad()
def greedy_decode(model, idx: Tensor, n: int) -> Tensor:
    """Extend ``idx`` by ``n`` tokens, each the argmax of the model's next-token logits.

    Args:
        model: callable ``model(idx) -> (logits, loss)`` with ``logits: (B, t, V)`` and an
            attribute ``config.block_size`` (the longest context it accepts).
        idx: ``(B, T)`` long prompt.
        n: number of tokens to append (>= 0).

    Returns:
        ``(B, T + n)`` long: the prompt followed by the ``n`` greedy tokens.
    """
    ### BEGIN SOLUTION
    block_size = model.config.block_size
    for _ in range(n):
        logits, _ = model(idx[:, -block_size:])  # (B, t, V) on the last block_size tokens
        next_id = logits[:, -1, :].argmax(dim=-1)  # (B,): the LAST position predicts the next token
        idx = torch.cat([idx, next_id[:, None]], dim=1)  # (B, t + 1)
    return idx
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_greedy_decode", "locked": true, "points": 2, "schema_version": 3, "solution": false}
torch.manual_seed(1)
toy = GPT(GPTConfig(vocab_size=11, block_size=6, d_model=16, n_heads=2, n_layers=2)).eval()
for p_ in toy.parameters():
    p_.data.mul_(25)  # bigger weights than at initialisation: a peaked, position-dependent next-token distribution
prompt = torch.tensor([[3, 1, 4], [1, 5, 9]])  # (B=2, T=3)
out = greedy_decode(toy, prompt, 2)
assert isinstance(out, torch.Tensor) and tuple(out.shape) == (2, 5), \
    f"greedy_decode(model, idx (2, 3), n=2) must return (B, T + n) = (2, 5), got {getattr(out, 'shape', type(out))}"
assert torch.equal(out[:, :3], prompt), "the output must start with the prompt, unchanged"
assert torch.equal(greedy_decode(toy, prompt, 0), prompt), "n = 0 must return the prompt itself"
first_logits, _ = toy(prompt)
assert torch.equal(out[:, 3], first_logits[:, -1].argmax(-1)), \
    "the first new token must be the argmax of the logits at the LAST position of the prompt"
long_out = greedy_decode(toy, prompt, 8)  # 3 + 8 = 11 tokens > block_size = 6
assert tuple(long_out.shape) == (2, 11), "generating past block_size must still work: feed only the last block_size tokens"
assert torch.equal(long_out, toy.generate(prompt, 8, greedy=True, use_cache=False)), \
    "your tokens differ from greedy decoding with the library's GPT: check which position's logits you use and how you crop"
print("greedy_decode: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: greedy_decode runs on small random GPTs built by the grader
# (different sizes, prompts longer or shorter than block_size) and its tokens are compared
# with attnlab's GPT.generate(greedy=True).
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "filters_intro", "locked": true, "schema_version": 3, "solution": false}
# **Top-k** and **top-p** keep a subset of the tokens and set the other logits to `-inf`, so a softmax afterwards
# renormalises over the kept tokens. Same names, signatures and contracts as `attnlab.nn`, without its argument
# checks (not asked, not graded). `torch.topk`, `torch.sort`, `cumsum`, `scatter` are allowed.

# %% nbgrader={"grade": false, "grade_id": "top_k_filter", "locked": false, "schema_version": 3, "solution": true}
def top_k_filter(logits: Tensor, k: int) -> Tensor:
    # docstring from attnlab.nn.sampling.top_k_filter, without Raises
    ### BEGIN SOLUTION
    if logits.dim() == 0 or k < 1:
        raise ValueError(f"need logits (..., V) and k >= 1, got shape {tuple(logits.shape)} and k={k}")
    k = min(k, logits.shape[-1])
    kth = logits.topk(k, dim=-1).values[..., -1:]  # (..., 1): the k-th largest logit of each row
    return logits.masked_fill(logits < kth, float("-inf"))
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_top_k_filter", "locked": true, "points": 1, "schema_version": 3, "solution": false}
row = torch.tensor([[1.0, 4.0, 2.0, 3.0, 0.0]])
kept = top_k_filter(row, 2)
assert tuple(kept.shape) == (1, 5), f"the result must keep the shape (..., V) = (1, 5), got {tuple(kept.shape)}"
n_kept = int(torch.isfinite(kept).sum())
assert n_kept == 2, f"k = 2 must keep exactly 2 tokens, your result keeps {n_kept}"
assert torch.isneginf(kept[0, 0]) and torch.isneginf(kept[0, 4]), "the removed tokens must be the SMALLEST logits, set to -inf"
assert kept[0, 1].item() == 4.0, "kept logits must keep their values (do not renormalise or zero them)"
assert torch.isfinite(top_k_filter(row, 7)).all(), "k >= V must keep every token"
assert tuple(top_k_filter(torch.randn(2, 3, 5), 1).shape) == (2, 3, 5), "any leading axes (..., V) must work"
print("top_k_filter: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: top_k_filter runs on fresh random logits and values of k
# (including k >= V) and is compared with attnlab.nn.top_k_filter.
### END HIDDEN TESTS

# %% nbgrader={"grade": false, "grade_id": "top_p_filter", "locked": false, "schema_version": 3, "solution": true}
def top_p_filter(logits: Tensor, p: float) -> Tensor:
    # docstring from attnlab.nn.sampling.top_p_filter, without Raises
    ### BEGIN SOLUTION
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p must be in (0, 1], got {p}")
    sorted_logits, order = logits.sort(dim=-1, descending=True)  # (..., V), most probable first
    probs = sorted_logits.softmax(dim=-1)  # (..., V)
    mass_before = probs.cumsum(dim=-1) - probs  # (..., V): total probability of strictly better tokens
    drop_sorted = mass_before >= p  # the nucleus already holds p without this token
    drop = drop_sorted.scatter(-1, order, drop_sorted)  # back to vocabulary order
    return logits.masked_fill(drop, float("-inf"))
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_top_p_filter", "locked": true, "points": 2, "schema_version": 3, "solution": false}
probs_demo = torch.tensor([[0.05, 0.5, 0.1, 0.3, 0.05]])  # token 1 then token 3 are the most probable
logits_p = probs_demo.log()
kept_p = top_p_filter(logits_p, 0.6)
assert tuple(kept_p.shape) == (1, 5), f"the result must keep the shape (..., V) = (1, 5), got {tuple(kept_p.shape)}"
finite = torch.isfinite(kept_p)[0].tolist()
assert finite[1], "the most probable token must always be kept"
assert finite[3], "p = 0.6: token 1 alone holds only 0.5 < 0.6, so the token that crosses p (token 3) must be kept too"
assert finite == [False, True, False, True, False], \
    "p = 0.6 must keep exactly tokens 1 and 3 (0.5 + 0.3 >= 0.6): check that the kept set is mapped back to vocabulary order"
assert torch.isfinite(top_p_filter(logits_p, 1.0)).all(), "p = 1 must keep every token"
assert torch.isfinite(top_p_filter(logits_p, 0.01)).sum() == 1, "a tiny p keeps only the most probable token"
shuffled = logits_p[:, [4, 2, 0, 3, 1]]  # same distribution, tokens in another order
assert torch.isfinite(top_p_filter(shuffled, 0.6))[0].tolist() == [False, False, False, True, True], \
    "the kept tokens must follow the tokens when the vocabulary is reordered (undo the sort)"
print("top_p_filter: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: top_p_filter runs on fresh random logits and values of p
# (including p = 1) and is compared with attnlab.nn.top_p_filter.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "part3_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3 · The KV cache
#
# During generation the keys and values of earlier positions never change (the decoder is causal), so each layer keeps
# them in a cache and the model only projects the newest tokens. Write one attention step of a layer that uses a cache:
# append the new keys/values **after** the cached ones, and let each new query attend to every key at its own
# position or before. The new tokens sit at absolute positions `S_old, ..., S_old + L_new - 1`, so new query `i`
# may attend key `j` iff `j <= S_old + i` (the alignment of `causal_mask(L, S)` with `S > L`).
# `scaled_dot_product_attention` (torch's or the course's) earns no credit here: write the softmax attention yourself.

# %% nbgrader={"grade": false, "grade_id": "attend_with_cache", "locked": false, "schema_version": 3, "solution": true}
def attend_with_cache(q: Tensor, k: Tensor, v: Tensor, cache_k: Tensor | None = None,
                      cache_v: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Causal self-attention of the newest ``L_new`` positions over the cache plus themselves.

    Args:
        q, k, v: ``(B, H, L_new, d_k)`` queries, keys, values of the new positions (``v`` may
            have its own width ``d_v``).
        cache_k, cache_v: ``(B, H, S_old, d_k)`` / ``(B, H, S_old, d_v)`` keys and values of the
            earlier positions, or ``None`` when nothing is cached yet (``S_old = 0``).

    Returns:
        ``out``: ``(B, H, L_new, d_v)``; ``k_all``, ``v_all``: ``(B, H, S, d_k)`` / ``(B, H, S, d_v)``
        with ``S = S_old + L_new`` (the updated cache, earlier positions first).
    """
    ### BEGIN SOLUTION
    k_all = k if cache_k is None else torch.cat([cache_k, k], dim=2)  # (B, H, S, d_k)
    v_all = v if cache_v is None else torch.cat([cache_v, v], dim=2)  # (B, H, S, d_v)
    L_new, S = q.shape[2], k_all.shape[2]
    scores = q @ k_all.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, L_new, S)
    allowed = torch.ones(L_new, S, dtype=torch.bool).tril(diagonal=S - L_new)  # j <= i + S_old
    scores = scores.masked_fill(~allowed, float("-inf"))
    weights = scores.softmax(dim=-1)  # (B, H, L_new, S)
    return weights @ v_all, k_all, v_all  # (B, H, L_new, d_v)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_attend_with_cache", "locked": true, "points": 2, "schema_version": 3, "solution": false}
g = torch.Generator().manual_seed(8)
qf, kf, vf = (torch.randn(1, 2, 5, 4, generator=g) for _ in range(3))  # (B=1, H=2, L=5, d_k=4)
out_full, k5, v5 = attend_with_cache(qf, kf, vf)  # no cache: plain causal attention over 5 positions
assert tuple(out_full.shape) == (1, 2, 5, 4) and tuple(k5.shape) == (1, 2, 5, 4), \
    f"without a cache, out and k_all must be (1, 2, 5, 4), got {tuple(out_full.shape)} and {tuple(k5.shape)}"
assert torch.allclose(out_full[:, :, 0], vf[:, :, 0], atol=1e-5), \
    "without a cache, position 0 may only see itself: is the causal mask missing?"
out3, k3, v3 = attend_with_cache(qf[:, :, :3], kf[:, :, :3], vf[:, :, :3])  # the prompt: positions 0..2
out4, k4, v4 = attend_with_cache(qf[:, :, 3:4], kf[:, :, 3:4], vf[:, :, 3:4], k3, v3)  # one new token
assert tuple(k4.shape) == (1, 2, 4, 4), f"after one step the cache must hold 4 positions, got {tuple(k4.shape)}"
assert torch.equal(k4[:, :, :3], k3), "the cached keys must come first and stay unchanged: append the new ones after them"
out5, _, _ = attend_with_cache(qf[:, :, 4:], kf[:, :, 4:], vf[:, :, 4:], k4, v4)
cached = torch.cat([out3, out4, out5], dim=2)  # (1, 2, 5, 4)
assert torch.allclose(cached, out_full, atol=1e-5), \
    "decoding with the cache must give exactly the outputs of full causal attention: check which keys a new query may see"
out_2new, _, _ = attend_with_cache(qf[:, :, 3:], kf[:, :, 3:], vf[:, :, 3:], k3, v3)  # two new tokens at once
assert torch.allclose(out_2new, out_full[:, :, 3:], atol=1e-5), \
    "two new tokens at once: the first may not see the second (new query i sees keys j <= S_old + i)"
print("attend_with_cache: visible checks passed (the cache changes the cost, never the result)")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: attend_with_cache runs on fresh random tensors (empty cache,
# one new token, several new tokens) and out, k_all, v_all are compared with attnlab's
# KVCache and scaled_dot_product_attention with causal_mask(L_new, S).
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "cache_bytes_intro", "locked": true, "schema_version": 3, "solution": false}
# The price of the cache is memory. By hand (an exact integer):

# %% by-hand skill="kv_cache_bytes" item="cache_bytes" variable="n_bytes"
# answer: the number of bytes, an integer
# Graded outside your kernel: `n_bytes` is checked against your own variant.
