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
# # Exercise 09 · Capstone: your own GPT, trained by your own loop
#
# In lesson 09 `attnlab.training.train` trained a character-level GPT on Tiny Shakespeare. Here you write every piece
# yourself: batches with teacher forcing, one optimisation step with gradient clipping, sampling, and **the GPT itself**
# (causal multi-head attention, the pre-LN block, the model with its loss), assembled from the pieces of exercises 05 and
# 06. Then **your** `get_batch` and `train_step` train **your** `TinyGPT` on Tiny Shakespeare next to the library's GPT on
# the same batches, you compare the two validation losses and loss curves, and your model writes text with your sampler.
#
# * Cells marked *answer* are yours; every other cell is locked.
# * Run the *check* cell under each answer: for code it tells you right away what is wrong (without giving the answer away); for numbers computed by hand it only says whether your answer can be read. To check your work as the grader does (your numbers, your code on its own inputs), save and run `attnlab check` on this notebook in a terminal (or `from attnlab.check import check; check()` in a cell).
# * Your by-hand numbers are personal: they come from your learner id, so a classmate's numbers will not match yours.
# * Graded (17 points): two by-hand answers (1 point each), `get_batch` (2), `train_step` (2), `sample_next_token` (2),
#   your GPT part by part: `CausalSelfAttention` (2), `Block` (2), `TinyGPT` (2), and the **training run** (3). Your
#   functions run on fresh inputs you have not seen; each part of your GPT is judged on its own (the grader puts the
#   course's attention into your `Block` and the course's blocks into your `TinyGPT`, with the same weights), so one
#   mistake costs one part's points and the feedback names it. For the training run the grader trains your `TinyGPT`
#   (the course's GPT if your parts are wrong) with your `train_step` on its own batches and measures the validation
#   loss itself on the weights your step produced.
# * Write your own code: importing the course library (`attnlab`) in an answer cell, calling the library version of
#   what you are asked to write, or using `exec`, `eval`, `open`, `os`, `sys` earns no credit. Answer cells may use
#   `math`, `np`, `torch`, `nn`, `F`, `Tensor` and the functions of earlier answer cells. Inside the grader the model
#   handed to `train_step` is a GPT with the interface of `attnlab.nn.GPT` (`model(x, y) -> (logits, loss)`), so use
#   only that interface.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import copy
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from attnlab.data import CharTokenizer, load_shakespeare, train_val_split
from attnlab.data import get_batch as course_get_batch
from attnlab.training import TrainConfig, make_train_step
from attnlab.nn import GPT, GPTConfig, MultiHeadAttention
from attnlab.nn import sample_next_token as library_sample
from attnlab.practice import gate
from attnlab.practice.problem import check_form, learner_note, show_problem

ASSIGNMENT = "09_capstone"
gate("09")  # lists any lesson-09 skill you have not mastered yet; never blocks
print(learner_note())

# %% [markdown] nbgrader={"grade": false, "grade_id": "by_hand_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · Before training: two numbers by hand
#
# Type the numbers themselves; code that computes them is not accepted here.

# %% nbgrader={"grade": false, "grade_id": "show_params", "locked": true, "schema_version": 3, "solution": false}
show_problem("gpt_param_count", f"{ASSIGNMENT}/test_params_by_hand")  # your own numbers (learner id above)

# %% nbgrader={"grade": false, "grade_id": "params_by_hand", "locked": false, "schema_version": 3, "solution": true}
# answer: the number of parameters, an integer
### BEGIN SOLUTION
from attnlab.practice import get_skill, learner_id, seed_for  # instructor copy, never released
n_params = get_skill("gpt_param_count").variant(seed_for(learner_id(), f"{ASSIGNMENT}/test_params_by_hand")).answer  # students type the numbers
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_params_by_hand", "locked": true, "points": 1, "schema_version": 3, "solution": false}
print(check_form("gpt_param_count", n_params))  # readable? (right or wrong is graded later)

### BEGIN HIDDEN TESTS
# Graded outside your kernel: `n_params` is checked against your own variant.
### END HIDDEN TESTS

# %% nbgrader={"grade": false, "grade_id": "show_uniform", "locked": true, "schema_version": 3, "solution": false}
show_problem("uniform_loss", f"{ASSIGNMENT}/test_uniform_by_hand")  # your own numbers (learner id above)

# %% nbgrader={"grade": false, "grade_id": "uniform_by_hand", "locked": false, "schema_version": 3, "solution": true}
# answer: the loss in nats, a number (3 decimals)
### BEGIN SOLUTION
from attnlab.practice import get_skill, learner_id, seed_for  # instructor copy, never released
start_loss = get_skill("uniform_loss").variant(seed_for(learner_id(), f"{ASSIGNMENT}/test_uniform_by_hand")).answer  # students type the numbers
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_uniform_by_hand", "locked": true, "points": 1, "schema_version": 3, "solution": false}
print(check_form("uniform_loss", start_loss))  # readable? (right or wrong is graded later)

### BEGIN HIDDEN TESTS
# Graded outside your kernel: `start_loss` is checked against your own variant.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "batch_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · Batches
#
# `get_batch` cuts `batch_size` windows of `block_size` tokens at random start positions of `data` and returns the
# inputs `x` and the targets `y`, where `y[:, t] = x[:, t + 1]` (teacher forcing). Every start position whose window
# *and* its targets fit in `data` must be possible. Draw the starts with `torch.randint(..., generator=generator)`, so
# that the same generator seed gives the same batch.

# %% nbgrader={"grade": false, "grade_id": "get_batch", "locked": false, "schema_version": 3, "solution": true}
def get_batch(data: Tensor, block_size: int, batch_size: int,
              generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """Random training windows for teacher forcing.

    Args:
        data: ``(N,)`` long token ids, ``N > block_size``.
        block_size: window length L. batch_size: number of windows B.
        generator: ``torch.Generator`` that draws the start positions (reproducible batches).

    Returns:
        ``x, y``: ``(B, L)`` long each, ``y[:, t] == x[:, t + 1]``: y is x shifted by one.
    """
    ### BEGIN SOLUTION
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)  # (B,) in [0, N - L - 1]
    offsets = torch.arange(block_size)  # (L,)
    x = data[starts[:, None] + offsets[None, :]]  # (B, L)
    y = data[starts[:, None] + offsets[None, :] + 1]  # (B, L), one position later
    return x.long(), y.long()
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_get_batch", "locked": true, "points": 2, "schema_version": 3, "solution": false}
data_demo = torch.arange(100, 120)  # (N=20,): token id = 100 + position, easy to read
xb, yb = get_batch(data_demo, 4, 3, torch.Generator().manual_seed(0))
assert tuple(xb.shape) == (3, 4) and tuple(yb.shape) == (3, 4), \
    f"x and y must be (batch_size, block_size) = (3, 4), got {tuple(xb.shape)} and {tuple(yb.shape)}"
assert xb.dtype == torch.long and yb.dtype == torch.long, "x and y must be long token ids"
assert torch.equal(xb[:, 1:] - xb[:, :-1], torch.ones(3, 3, dtype=torch.long)), "each row of x must be a contiguous window of data"
assert not torch.equal(xb, yb), "y equals x: the targets must be shifted by one position"
assert torch.equal(yb, xb + 1), "y[:, t] must be the token right after x[:, t] (data[start + t + 1])"
x2, _ = get_batch(data_demo, 4, 3, torch.Generator().manual_seed(0))
assert torch.equal(xb, x2), "the same generator seed must give the same batch: draw the starts with generator=generator"
many, many_y = get_batch(data_demo, 4, 2000, torch.Generator().manual_seed(1))
starts_seen = set((many[:, 0] - 100).tolist())
assert int(many_y.max()) <= 119, "a window's targets run past the end of data"
assert starts_seen == set(range(16)), \
    f"with N = 20 and block_size = 4 every start 0..15 must be possible; 2000 windows used {sorted(starts_seen)}"
print("get_batch: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: get_batch runs on fresh random token streams; the grader checks
# shapes, that every row of (x, y) is a window of data and the window after it, that all
# start positions occur, and that the same generator seed reproduces the batch.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "step_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3 · One training step
#
# One optimisation step: clear the gradients left by the previous step, compute the loss with `model(x, y)` (it returns
# `(logits, loss)`), back-propagate, clip the global gradient norm to `grad_clip` with
# `torch.nn.utils.clip_grad_norm_`, and let the optimizer update the weights. Return the loss as a Python float.

# %% nbgrader={"grade": false, "grade_id": "train_step", "locked": false, "schema_version": 3, "solution": true}
def train_step(model, optimizer, x: Tensor, y: Tensor, grad_clip: float = 1.0) -> float:
    """One optimisation step of next-token training.

    Args:
        model: ``model(x, y) -> (logits, loss)`` with the mean cross-entropy ``loss`` (a scalar).
        optimizer: a ``torch.optim`` optimizer over ``model.parameters()``.
        x, y: ``(B, L)`` long inputs and targets.
        grad_clip: maximum global norm of the gradient (``clip_grad_norm_``).

    Returns:
        float: the loss of this batch, computed *before* the update.
    """
    ### BEGIN SOLUTION
    optimizer.zero_grad(set_to_none=True)  # gradients of the previous step must not leak into this one
    _, loss = model(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)  # after backward, before step
    optimizer.step()
    return loss.item()
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_train_step", "locked": true, "points": 2, "schema_version": 3, "solution": false}
torch.manual_seed(0)
m = GPT(GPTConfig(vocab_size=10, block_size=8, d_model=16, n_heads=2, n_layers=1))
xs, ys = torch.randint(10, (4, 8)), torch.randint(10, (4, 8))
before = [p.detach().clone() for p in m.parameters()]
with torch.no_grad():
    loss_before = m(xs, ys)[1].item()
_, fresh = m(xs, ys)
grads = torch.autograd.grad(fresh, list(m.parameters()))  # the gradient of THIS batch
for p in m.parameters():
    p.grad = torch.full_like(p, 50.0)  # stale gradients, as left by a previous step
opt = torch.optim.SGD(m.parameters(), lr=0.1)
returned = train_step(m, opt, xs, ys, grad_clip=0.01)
assert isinstance(returned, float), f"return the loss as a Python float (loss.item()), got {type(returned).__name__}"
assert abs(returned - loss_before) < 1e-5, "return the loss of the batch computed BEFORE the update"
delta = torch.cat([(p.detach() - b).flatten() for p, b in zip(m.parameters(), before)])
g_flat = torch.cat([g.flatten() for g in grads])
assert delta.norm() > 0, "the weights did not change: call optimizer.step() after loss.backward()"
cosine = float(-(delta @ g_flat) / (delta.norm() * g_flat.norm()))
assert cosine > 0.999, \
    "the update does not follow this batch's gradient: clear the old gradients (optimizer.zero_grad()) before backward"
assert delta.norm() <= 0.1 * 0.01 * 1.001, \
    "the update is larger than lr · grad_clip: clip the gradient norm after backward and before optimizer.step()"
print("train_step: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: train_step runs one step on a small GPT built by the grader,
# with stale gradients present and a small grad_clip; the returned loss and the updated
# weights are compared with the grader's own step.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "sample_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 4 · Sampling
#
# Same name, signature and contract as `attnlab.nn.sample_next_token`: with `greedy=True` return the argmax; otherwise
# divide the logits by `temperature`, apply top-k and then top-p if they are given (as in exercise 08: rewrite them
# here, an answer cell cannot see another notebook), and draw one token per row with
# `torch.multinomial(probs, num_samples=1, generator=generator)`. With the same generator seed your tokens must then be
# the same as the library's.

# %% nbgrader={"grade": false, "grade_id": "sample_next_token", "locked": false, "schema_version": 3, "solution": true}
def sample_next_token(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                      top_p: float | None = None, greedy: bool = False,
                      generator: torch.Generator | None = None) -> Tensor:
    """Pick one token per row from ``logits: (B, V)``; returns ``(B,)`` long.

    ``greedy=True`` takes the argmax (temperature and filters do not change it). Otherwise
    logits are divided by ``temperature``, filtered by top-k then top-p, and one token is
    drawn from the softmax with ``torch.multinomial`` (reproducible with ``generator``).
    """
    ### BEGIN SOLUTION
    if greedy:
        return logits.argmax(dim=-1)  # (B,)
    logits = logits / temperature
    if top_k is not None:
        kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1).values[..., -1:]  # (B, 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None:
        sorted_logits, order = logits.sort(dim=-1, descending=True)  # (B, V)
        probs_sorted = sorted_logits.softmax(dim=-1)
        drop_sorted = probs_sorted.cumsum(dim=-1) - probs_sorted >= top_p  # nucleus already full
        logits = logits.masked_fill(drop_sorted.scatter(-1, order, drop_sorted), float("-inf"))
    probs = logits.softmax(dim=-1)  # (B, V)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)  # (B,)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_sample_next_token", "locked": true, "points": 2, "schema_version": 3, "solution": false}
g = torch.Generator().manual_seed(3)
lg = torch.randn(64, 12, generator=g) * 2  # (B=64, V=12)
greedy_tokens = sample_next_token(lg, greedy=True)
assert tuple(greedy_tokens.shape) == (64,), f"return one token per row, shape (B,) = (64,), got {tuple(greedy_tokens.shape)}"
assert torch.equal(greedy_tokens, lg.argmax(-1)), "greedy=True must return the argmax of each row"
drawn = sample_next_token(lg, top_k=1, generator=torch.Generator().manual_seed(0))
assert torch.equal(drawn, lg.argmax(-1)), "top_k=1 keeps only the most probable token, so it must always be drawn"
k3 = sample_next_token(lg, top_k=3, generator=torch.Generator().manual_seed(0))
top3 = lg.topk(3, dim=-1).indices
assert (k3[:, None] == top3).any(-1).all(), "with top_k=3 every drawn token must be one of the 3 most probable of its row"
for kw in ({}, {"temperature": 0.5}, {"top_k": 4}, {"top_p": 0.7}, {"temperature": 2.0, "top_k": 6, "top_p": 0.8}):
    mine = sample_next_token(lg, **kw, generator=torch.Generator().manual_seed(7))
    ref = library_sample(lg, **kw, generator=torch.Generator().manual_seed(7))
    assert torch.equal(mine, ref), \
        f"with {kw or 'the defaults'} and the same generator seed your tokens differ from the library's: " \
        "temperature first, then top-k, then top-p, then torch.multinomial on the softmax"
print("sample_next_token: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: sample_next_token runs on fresh random logits with fresh
# seeds and options, and its tokens are compared with attnlab.nn.sample_next_token.
### END HIDDEN TESTS


# %% [markdown] nbgrader={"grade": false, "grade_id": "assemble_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 5 · Assemble your GPT
#
# Lesson 09's ladder built a GPT up one piece at a time. Now assemble it yourself, from your own pieces: the causal
# multi-head attention of exercise 05, the feed-forward network and the pre-LN block of exercise 06, and the embeddings,
# tied output layer and loss of lesson 09. The `__init__` methods are given (they fix the parameter names, so the grader
# can load weights into your model); write the three `forward` methods, one cell each. Paste and adapt your earlier code
# where you have it: an answer cell cannot see another notebook.
#
# | module | computes | parameters |
# |---|---|---|
# | `CausalSelfAttention` | split into `n_heads` heads of width `d_k`, `softmax(Q Kᵀ / √d_k)` with the **causal mask**, times `V`, merge the heads, `W_O` | `w_q`, `w_k`, `w_v`, `w_o` (with biases) |
# | `Block` (pre-LN) | `h = x + attn(norm1(x))`, then `h + w_2(GELU(w_1(norm2(h))))` (exact GELU, `F.gelu`) | `norm1`, `attn`, `norm2`, `w_1`, `w_2` |
# | `TinyGPT` | token embedding + position embedding (positions `0 .. L-1`), the blocks, final LayerNorm `norm_f`, then the output layer **tied** to the token embedding: `logits = x @ tok_emb.weight.T`; with targets, the mean cross-entropy | `tok_emb`, `pos_emb`, `blocks`, `norm_f` |
#
# `TinyGPT(idx, targets=None)` returns `(logits, loss)` like `attnlab.nn.GPT`: `logits: (B, L, vocab_size)` for
# `idx: (B, L)` with `L <= block_size`, and `loss` the mean cross-entropy of the logits against `targets: (B, L)`, or
# `None` without targets (no dropout). That is the interface your `train_step` uses, so Part 6 can train your model.
# With the same weights it must compute what `attnlab.nn.GPT(GPTConfig(vocab_size, block_size, d_model, n_heads,
# n_layers))` computes (whose `norm3` is your `norm2`, whose `ffn.w_1`, `ffn.w_2` are your `w_1`, `w_2` and whose
# `self_attn` is your `attn`).
#
# **Graded part by part** (2 points each): each part is judged on its own. The grader runs your `Block` with the course's
# attention in place of yours, and your `TinyGPT` with the course's blocks, all holding the same weights, so a mistake in
# one part costs that part's points only, and the feedback names the mistake (a merge without transpose, a missing
# 1/√d_k, post-LN, positions counted from 1, an untied output layer, ...). The check cells below do the same: your
# `Block` is checked with the course's attention (`CourseAttention`) in it.

# %% nbgrader={"grade": false, "grade_id": "assemble_helpers", "locked": true, "schema_version": 3, "solution": false}
def tiny_from_gpt(gpt: GPT) -> dict[str, Tensor]:
    """The parameters of attnlab.nn.GPT `gpt` under TinyGPT's names (the tied output layer IS tok_emb.weight)."""
    names = {"pos_emb.emb.": "pos_emb.", ".self_attn.": ".attn.", ".ffn.": ".", ".norm3.": ".norm2."}
    state = {}
    for key, value in gpt.named_parameters():
        for old, new in names.items():
            key = key.replace(old, new)
        state[key] = value.detach()
    return state


def load_weights(module: nn.Module, state: dict[str, Tensor]) -> None:
    """Copy `state` into `module`'s parameters by name. Buffers (e.g. a causal-mask table you registered) are
    left as they are; a name your module lacks raises KeyError: keep the __init__ methods as given."""
    params = dict(module.named_parameters())
    with torch.no_grad():
        for name, value in state.items():
            if name not in params:
                raise KeyError(f"your module has no parameter {name!r}: keep the __init__ as given")
            params[name].copy_(value)


class CourseAttention(nn.Module):
    """attnlab.nn.MultiHeadAttention used as causal self-attention: x (B, L, d_model) -> (B, L, d_model)."""

    def __init__(self, mha: nn.Module) -> None:
        super().__init__()
        self.mha = mha

    def forward(self, x: Tensor) -> Tensor:
        return self.mha(x, is_causal=True)[0]


def trained_looking(module: nn.Module) -> nn.Module:
    """`module` with noise added to its weights: weights of a trained-looking model, not the tiny initial ones."""
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return module


# %% nbgrader={"grade": false, "grade_id": "causal_self_attention", "locked": false, "schema_version": 3, "solution": true}
class CausalSelfAttention(nn.Module):
    """Causal multi-head self-attention ``(B, L, d_model) -> (B, L, d_model)`` (Vaswani et al. 2017, §3.2.2).

    Query i attends to keys ``j <= i`` only. ``d_k = d_model // n_heads``; head h uses features
    ``h*d_k .. (h+1)*d_k - 1`` of the projections (as ``split_heads``, exercise 05).
    """

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x: Tensor) -> Tensor:
        ### BEGIN SOLUTION
        B, L, d_model = x.shape
        q, k, v = (w(x).view(B, L, self.n_heads, self.d_k).transpose(1, 2) for w in (self.w_q, self.w_k, self.w_v))  # (B, H, L, d_k)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, H, L, L)
        causal = torch.ones(L, L, dtype=torch.bool, device=x.device).tril()  # query i sees keys j <= i
        weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, L, d_model)  # (B, H, L, d_k) -> (B, L, d_model)
        return self.w_o(out)
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_causal_self_attention", "locked": true, "points": 2, "schema_version": 3, "solution": false}
torch.manual_seed(0)
course_attn = trained_looking(MultiHeadAttention(12, 3)).eval()
my_attn = CausalSelfAttention(12, 3).eval()
load_weights(my_attn, dict(course_attn.named_parameters()))  # the same names: w_q, w_k, w_v, w_o
x = torch.randn(2, 7, 12)  # (B, L, d_model), 3 heads of d_k = 4
with torch.no_grad():
    out, expected = my_attn(x), course_attn(x, is_causal=True)[0]
    changed = x.clone()
    changed[:, 4:] += torch.randn(2, 3, 12)  # change positions 4..6 only
    early = my_attn(changed)[:, :4]
assert isinstance(out, torch.Tensor) and tuple(out.shape) == (2, 7, 12), \
    f"CausalSelfAttention(x) must return (B, L, d_model) = (2, 7, 12), got {getattr(out, 'shape', type(out))}"
assert torch.allclose(early, out[:, :4], atol=1e-5), \
    "changing positions 4..6 changed the outputs at positions 0..3: query i may attend to keys j <= i only (the causal mask)"
assert torch.allclose(out, expected, atol=1e-4), \
    f"your attention differs from attnlab.nn.MultiHeadAttention(x, is_causal=True) with the same weights (max abs " \
    f"difference {(out - expected).abs().max():.3g}): check the head split (view as (B, L, H, d_k), then transpose(1, 2)), " \
    "the 1/√d_k scale, the softmax over the keys (dim=-1) and the merge (transpose back, then reshape)"
with torch.no_grad():
    long_x = torch.randn(1, 100, 12)
    try:
        long_out = my_attn(long_x)
    except (RuntimeError, IndexError) as err:
        raise AssertionError(f"on 100 positions your attention raised {type(err).__name__}: build the mask for the "
                             "length L of x (a table of fixed size breaks on longer sequences)") from None
    assert torch.allclose(long_out, course_attn(long_x, is_causal=True)[0], atol=1e-4), \
        "on 100 positions your attention differs from the course's: build the mask for the length L of x"
print("CausalSelfAttention: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: CausalSelfAttention gets fresh sizes (2-4 heads, up to 80 positions) and random
# weights; its output is compared with attnlab.nn.MultiHeadAttention(is_causal=True) holding the same weights,
# and a wrong output is matched against known mistakes to name yours.
### END HIDDEN TESTS

# %% nbgrader={"grade": false, "grade_id": "block", "locked": false, "schema_version": 3, "solution": true}
class Block(nn.Module):
    """Pre-LN decoder block without cross-attention (GPT-2): ``x + attn(LN(x))``, then ``+ FFN(LN(.))``."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(d_model), CausalSelfAttention(d_model, n_heads)
        self.norm2 = nn.LayerNorm(d_model)
        self.w_1, self.w_2 = nn.Linear(d_model, 4 * d_model), nn.Linear(4 * d_model, d_model)

    def forward(self, x: Tensor) -> Tensor:
        ### BEGIN SOLUTION
        h = x + self.attn(self.norm1(x))  # (B, L, d_model): the residual stream is only added to
        return h + self.w_2(F.gelu(self.w_1(self.norm2(h))))
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_block", "locked": true, "points": 2, "schema_version": 3, "solution": false}
torch.manual_seed(1)
course_gpt = trained_looking(GPT(GPTConfig(vocab_size=5, block_size=6, d_model=12, n_heads=3, n_layers=1))).eval()
my_block = Block(12, 3).eval()
load_weights(my_block, {k[len("blocks.0."):]: v for k, v in tiny_from_gpt(course_gpt).items() if k.startswith("blocks.0.")})
my_block.attn = CourseAttention(course_gpt.blocks[0].self_attn)  # your Block is checked on its own
x = torch.randn(2, 6, 12)
with torch.no_grad():
    out, expected = my_block(x), course_gpt.blocks[0](x, is_causal=True)
assert isinstance(out, torch.Tensor) and tuple(out.shape) == (2, 6, 12), \
    f"Block(x) must return (B, L, d_model) = (2, 6, 12), got {getattr(out, 'shape', type(out))}"
assert torch.allclose(out, expected, atol=1e-4), \
    f"your Block differs from the course's pre-LN block with the same weights and the course's attention inside (max " \
    f"abs difference {(out - expected).abs().max():.3g}): normalise each sub-layer's input and add its output to the " \
    "un-normalised stream (x, then h), norm1 before attention and norm2 before the feed-forward, exact GELU (F.gelu)"
print("Block: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: Block gets fresh sizes and random weights, with the course's attention in place of
# yours; its output is compared with attnlab.nn.GPT's block holding the same weights, and a wrong output is
# matched against known mistakes (post-LN, ReLU or tanh-GELU, one LayerNorm for both sub-layers, ...).
### END HIDDEN TESTS

# %% nbgrader={"grade": false, "grade_id": "tiny_gpt", "locked": false, "schema_version": 3, "solution": true}
class TinyGPT(nn.Module):
    """Decoder-only language model in the layout of ``attnlab.nn.GPT`` (GPT-2, Radford et al. 2019).

    ``forward(idx: (B, L) long, targets: (B, L) long | None) -> (logits (B, L, vocab_size), loss)``,
    ``L <= block_size``: token embedding + learned position embedding, ``n_layers`` pre-LN blocks, final
    LayerNorm, output layer tied to the token embedding; ``loss`` is the mean cross-entropy against
    ``targets`` (a scalar), or None without targets.
    """

    def __init__(self, vocab_size: int, block_size: int, d_model: int, n_heads: int, n_layers: int) -> None:
        super().__init__()
        self.tok_emb, self.pos_emb = nn.Embedding(vocab_size, d_model), nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads) for _ in range(n_layers))
        self.norm_f = nn.LayerNorm(d_model)

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        ### BEGIN SOLUTION
        B, L = idx.shape
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(L, device=idx.device))  # (B, L, d_model)
        for block in self.blocks:
            x = block(x)
        logits = self.norm_f(x) @ self.tok_emb.weight.T  # (B, L, V): the tied output layer
        loss = None if targets is None else F.cross_entropy(logits.reshape(B * L, -1), targets.reshape(B * L))
        return logits, loss
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_tiny_gpt", "locked": true, "points": 2, "schema_version": 3, "solution": false}
torch.manual_seed(0)
ref_gpt = trained_looking(GPT(GPTConfig(vocab_size=13, block_size=10, d_model=16, n_heads=4, n_layers=2))).eval()
mine = TinyGPT(vocab_size=13, block_size=10, d_model=16, n_heads=4, n_layers=2).eval()
load_weights(mine, tiny_from_gpt(ref_gpt))
idx, targets = torch.randint(13, (3, 7)), torch.randint(13, (3, 7))  # L = 7 < block_size
with torch.no_grad():
    out, plain = mine(idx, targets), mine(idx)
    expected, expected_loss = ref_gpt(idx, targets)
assert isinstance(out, tuple) and len(out) == 2 and isinstance(plain, tuple) and len(plain) == 2, \
    "TinyGPT(idx, targets) must return the pair (logits, loss), and TinyGPT(idx) the pair (logits, None)"
logits, loss = out
assert isinstance(logits, torch.Tensor) and tuple(logits.shape) == (3, 7, 13), \
    f"the logits must be (B, L, vocab_size) = (3, 7, 13), got {getattr(logits, 'shape', type(logits))}"
assert plain[1] is None, "without targets the loss must be None"
assert torch.allclose(logits, expected, atol=1e-4), \
    f"your logits differ from attnlab.nn.GPT's with the same weights (max abs difference " \
    f"{(logits - expected).abs().max():.3g}): check the parts' checks above, then the positions (0 .. L-1), norm_f " \
    "and the tied output layer (x @ tok_emb.weight.T)"
assert loss is not None, "with targets the loss must not be None: return the mean cross-entropy against the targets"
assert isinstance(loss, torch.Tensor) and loss.dim() == 0 and torch.allclose(loss, expected_loss, atol=1e-5), \
    f"your loss is {float(loss):.4g}, attnlab.nn.GPT's {float(expected_loss):.4g}: the mean cross-entropy over all " \
    "B · L positions, F.cross_entropy(logits.reshape(B * L, V), targets.reshape(B * L)) (the targets are already the " \
    "next tokens: no second shift)"
with torch.no_grad():
    full = torch.randint(13, (2, 10))  # L = block_size
    assert torch.allclose(mine(full)[0], ref_gpt(full)[0], atol=1e-4), "with L = block_size the logits differ: positions 0 .. L-1"
print("TinyGPT: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: TinyGPT is built with fresh sizes (several heads, one or two layers, L up to
# block_size) and random weights, with the course's blocks in place of yours; its logits and loss are compared
# with attnlab.nn.GPT holding the same weights, and a wrong result is matched against known mistakes.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "run_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 6 · Train your own GPT
#
# Now your pieces train your model: your `get_batch` draws the windows, your `train_step` trains **your `TinyGPT`**
# (2 layers, `d_model = 32`, context 32 characters) for 300 steps of 32 windows with AdamW on a slice of Tiny
# Shakespeare, from the same starting weights as the library's `attnlab.nn.GPT`. So that a gap can be blamed on the
# right part, the cell trains three more runs from the same weights and the same batch seed: the library's GPT with
# the course's step (`attnlab.training.make_train_step`) on the course's batches (`attnlab.data.get_batch`): the course's
# run; **your `TinyGPT` with the course's step and batches**: does your *model* train like the library's? (a correct
# one ends within **0.05 nats** above it, in practice within a few thousandths); and **the library's GPT with your
# `train_step` and `get_batch`**: does your *training step and batching* train like the course's? (within **0.1 nats**
# above it). Ending *below* the course's run is never held against you. Both loss curves are shown. It must also end at
# least **0.4 nats below** the model that knows only the character frequencies (about 3.3 nats; uniform guessing
# scores 4.17), which it can only do by using the context. Lesson 09's full run (nanoGPT's CPU recipe, 2,000 steps of
# a larger model) reaches about 1.88.
#
# **Expected time of the next cell: about a minute on a shared 2-core machine** (measured: 54 s for the four runs at
# load average 11), 10 to 20 s on a quiet one; it runs torch on one thread, since for models this small more threads
# only wait for each other.
#
# The grader does the same with its own batches on a slice of the text you have not seen: it trains your `TinyGPT`
# (when its parts compute what `attnlab.nn.GPT` computes; otherwise the course's GPT) with your `train_step` for 80
# steps from initial weights it draws for that run, loads the weights it produced into `attnlab.nn.GPT` and measures
# the validation loss itself on text the training never saw. It must be within **0.25 nats** of the course's own
# `train_step` on the same text, seed and batches, and the weights must be the ones the course's `train_step` produces
# from the same initial weights and batches (within 2 % of that run's whole change): one update per call, on the
# batch it is given.

# %% nbgrader={"grade": true, "grade_id": "test_training_run", "locked": true, "points": 3, "schema_version": 3, "solution": false}
torch.set_num_threads(1)
text = load_shakespeare()
tok = CharTokenizer(text)
ids = torch.tensor(tok.encode(text[:24_000]), dtype=torch.long)
train_ids, val_ids = ids[:20_000], ids[20_000:]
STEPS, LR = 300, 6e-3
torch.manual_seed(0)
library_gpt = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=32, d_model=32, n_heads=2, n_layers=2))
library_start = copy.deepcopy(library_gpt)  # GPT-2's initialisation, kept before any training
start_weights = tiny_from_gpt(library_start)  # the same weights under TinyGPT's names


def fresh_tiny() -> TinyGPT:
    """Your TinyGPT holding the library GPT's starting weights."""
    tiny = TinyGPT(tok.vocab_size, block_size=32, d_model=32, n_heads=2, n_layers=2)
    load_weights(tiny, start_weights)
    return tiny


def fresh_library() -> GPT:
    """The library's GPT with the same starting weights."""
    return copy.deepcopy(library_start)


def run(model: nn.Module, step: str, batches: str) -> list[float]:
    """Train `model` for STEPS steps: step "yours" (your train_step) or "course" (the library's step); batches
    "yours" (your get_batch) or "course" (attnlab.data.get_batch), each from the same generator seed."""
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    course_step = make_train_step(model, opt, TrainConfig(precision="fp32", grad_clip=1.0))
    draw = get_batch if batches == "yours" else course_get_batch
    gen, losses = torch.Generator().manual_seed(0), []
    for _ in range(STEPS):
        xb, yb = draw(train_ids, 32, 32, gen)
        losses.append(train_step(model, opt, xb, yb) if step == "yours" else float(course_step(xb, yb, LR)))
    return losses


def val_loss(model: nn.Module) -> float:
    """Mean loss on the same held-out windows for every model (drawn with the library's get_batch)."""
    gen = torch.Generator().manual_seed(1)
    model.eval()
    with torch.no_grad():
        return sum(model(*course_get_batch(val_ids, 32, 64, gen))[1].item() for _ in range(4)) / 4


t0 = time.perf_counter()
my_gpt = fresh_tiny()
my_losses = run(my_gpt, "yours", "yours")                 # your model, your step, your batches: your GPT
library_losses = run(library_gpt, "course", "course")     # the course's model, step and batches
model_only = fresh_tiny()
run(model_only, "course", "course")                       # your model with the course's step and batches
step_only = fresh_library()
run(step_only, "yours", "yours")                          # the course's model with your step and batches
seconds = time.perf_counter() - t0
my_val, library_val = val_loss(my_gpt), val_loss(library_gpt)
model_gap, step_gap = val_loss(model_only) - library_val, val_loss(step_only) - library_val
counts = torch.bincount(train_ids, minlength=tok.vocab_size).double() + 1  # character frequencies (add-one)
frequency_loss = -(counts / counts.sum()).log()[val_ids].mean().item()
plt.figure(figsize=(6, 3))
plt.plot(my_losses, label="your TinyGPT (your get_batch, train_step)")
plt.plot(library_losses, "--", label="attnlab.nn.GPT (the course's step and batches)")
plt.axhline(frequency_loss, color="gray", lw=0.8, label="character frequencies only")
plt.xlabel("step"), plt.ylabel("training loss (nats)"), plt.legend(), plt.tight_layout(), plt.show()
print(f"4 runs of {STEPS} steps in {seconds:.1f} s")
print(f"validation loss: yours {my_val:.3f}, the course's {library_val:.3f}; frequency-only model {frequency_loss:.2f}")
print(f"  your TinyGPT with the course's step and batches: {model_gap:+.3f} nats from the course's run")
print(f"  the course's GPT with your train_step and get_batch: {step_gap:+.3f} nats from the course's run")
assert my_losses[0] > 3.5, "the first loss should be close to ln 65 ≈ 4.17 for a fresh model: is the loss computed on the right targets?"
problems = []
if model_gap > 0.05:
    problems.append(f"your TinyGPT, trained with the course's step on the course's batches, ends {model_gap:+.3f} nats above "
                    "the library's GPT from the same weights (a correct model is within 0.05): check the TinyGPT cells above")
if step_gap > 0.1:
    problems.append(f"the course's GPT, trained with your train_step on your get_batch's batches, ends {step_gap:+.3f} nats "
                    "above the course's own step (a correct step is within 0.1): check zero_grad, backward, the loss "
                    "(model(x, y) already pairs each position with the next token), the clipping, optimizer.step() and "
                    "get_batch")
assert not problems, "; and ".join(problems)
assert my_val <= frequency_loss - 0.4, \
    f"the validation loss is only {frequency_loss - my_val:.2f} nats below the frequency-only model (needs 0.4): " \
    "check the shift of the targets, zero_grad and optimizer.step()"
print("training run: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: the grader trains your TinyGPT (or, if its parts are wrong, the course's GPT) with
# your train_step for 80 steps on its own batches of a slice you have not seen, loads the weights into
# attnlab.nn.GPT and measures the validation loss itself; it must be within 0.25 nats of the course's own
# train_step on the same slice, seed, batches and steps, and the weights must be that run's from the same initial
# weights (within 2 % of its whole change).
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "try_it", "locked": true, "schema_version": 3, "solution": false}
# **Try it (not graded).** The cell below generates 300 characters from **your** trained `TinyGPT` with **your**
# `sample_next_token`. After 300 steps expect word-like fragments, names and line breaks, not Shakespeare: lesson 09's
# longer run does much better.

# %% nbgrader={"grade": false, "grade_id": "demo_sample", "locked": true, "schema_version": 3, "solution": false}
def generate_text(model: nn.Module, prompt: str, n: int = 300, seed: int = 0) -> str:
    """`n` characters after `prompt` from `model` (TinyGPT's interface), drawn with your sample_next_token."""
    idx = torch.tensor([tok.encode(prompt)])
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _ in range(n):
            logits, _ = model(idx[:, -32:])  # the last block_size characters
            idx = torch.cat([idx, sample_next_token(logits[:, -1], temperature=0.8, top_k=10, generator=g)[:, None]], dim=1)
    return tok.decode(idx[0].tolist())


print(generate_text(my_gpt, "ROMEO:\n"))

# %% [markdown] nbgrader={"grade": false, "grade_id": "finetune_intro", "locked": true, "schema_version": 3, "solution": false}
# **Beyond (not graded): fine-tune your model on a second text.** Your model has read only the first 20,000 characters
# of the file. The cell below measures its loss on a slice from much later in the file (other plays, other names),
# fine-tunes it there for 150 more steps with your `get_batch` and `train_step`, and plots the loss on that text before
# and during fine-tuning: the curve starts above the first text's validation loss and moves down as the model adapts.
# Try another slice, more steps or a lower learning rate, and generate again. A few seconds to about 15 s.

# %% nbgrader={"grade": false, "grade_id": "finetune", "locked": true, "schema_version": 3, "solution": false}
second = torch.tensor(tok.encode(text[-24_000:]), dtype=torch.long)  # the end of the file: other plays
second_train, second_val = second[:20_000], second[20_000:]
second_batches = [get_batch(second_val, 32, 64, torch.Generator().manual_seed(2)) for _ in range(4)]


def second_val_loss(model: nn.Module) -> float:
    """Mean validation loss (nats) of `model` on the second text's held-out windows."""
    model.eval()
    with torch.no_grad():
        loss = sum(model(xv, yv)[1].item() for xv, yv in second_batches) / len(second_batches)
    model.train()
    return loss


finetune_opt = torch.optim.AdamW(my_gpt.parameters(), lr=3e-3, weight_decay=0.0)
gen2 = torch.Generator().manual_seed(3)
curve = [(0, second_val_loss(my_gpt))]
for step in range(1, 151):
    train_step(my_gpt, finetune_opt, *get_batch(second_train, 32, 32, gen2))
    if step % 25 == 0:
        curve.append((step, second_val_loss(my_gpt)))
plt.figure(figsize=(6, 3))
plt.plot(*zip(*curve), marker="o", label="second text, validation")
plt.axhline(my_val, color="gray", lw=0.8, label="first text, validation (before)")
plt.xlabel("fine-tuning step"), plt.ylabel("loss (nats)"), plt.legend(), plt.tight_layout(), plt.show()
print(f"loss on the second text: {curve[0][1]:.3f} before, {curve[-1][1]:.3f} after 150 steps of fine-tuning")
print(generate_text(my_gpt, "KING:\n", n=200))
