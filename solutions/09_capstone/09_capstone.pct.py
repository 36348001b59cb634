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
# # Exercise 09 · Capstone: your own GPT and its training loop
#
# In lesson 09 `attnlab.training.train` trained a character-level GPT on Tiny Shakespeare. Here you write the loop's
# pieces yourself (batches with teacher forcing, one optimisation step with gradient clipping, sampling from the
# model), then **your** pieces train a small GPT that must reach a validation-loss threshold, and finally you
# **assemble the GPT itself** from the pieces of exercises 05 and 06 (causal multi-head attention, the feed-forward
# network, pre-LN blocks) and check that it computes exactly what `attnlab.nn.GPT` computes.
#
# * Cells marked *answer* are yours; every other cell is locked.
# * Run the *check* cell under each answer: for code it tells you right away what is wrong (without giving the answer away); for numbers computed by hand it only says whether your answer can be read. To check your work as the grader does (your numbers, your code on its own inputs), save and run `attnlab check` on this notebook in a terminal (or `from attnlab.check import check; check()` in a cell).
# * Your by-hand numbers are personal: they come from your learner id, so a classmate's numbers will not match yours.
# * Graded (14 points): two by-hand answers (1 point each), `get_batch` (2), `train_step` (2), `sample_next_token` (2),
#   **your assembled GPT** `TinyGPT` (3) and the **training run** (3): when your instructor grades, the grader trains a fresh small GPT for 150 steps on a
#   slice of Tiny Shakespeare with *your* `get_batch` and `train_step`, runs the same recipe with the course's own
#   `get_batch` and `train_step`, and your validation loss must end within 0.25 nats of the course's (a correct loop
#   lands within a few hundredths; a forgotten `zero_grad` about 0.5 to 0.9 nats above). Your other functions also run on fresh inputs you have not seen; `TinyGPT` gets fresh sizes and random weights
#   and its logits are compared with `attnlab.nn.GPT` holding the same weights.
# * Write your own code: importing the course library (`attnlab`) in an answer cell, calling the library version of
#   what you are asked to write, or using `exec`, `eval`, `open`, `os`, `sys` earns no credit. Answer cells may use
#   `math`, `np`, `torch`, `nn`, `F`, `Tensor` and the functions of earlier answer cells. Inside the grader the model is a GPT with the
#   same interface as `attnlab.nn.GPT` (`model(x, y) -> (logits, loss)`), so use only that interface.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from IPython.display import Markdown, display

from attnlab.data import CharTokenizer, load_shakespeare, train_val_split
from attnlab.nn import GPT, GPTConfig
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

# %% [markdown] nbgrader={"grade": false, "grade_id": "run_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 4 · The training run
#
# Your `get_batch` and `train_step` now train a small GPT (2 layers, `d_model = 32`, context 32 characters) for 150
# steps of 32 windows with AdamW. This is exactly what the grader does on a slice of the text you have not seen. The
# bar is lesson 09's second reference loss: the model that knows only the character frequencies (about 3.3 nats;
# uniform guessing scores 4.17). Your GPT's validation loss must end at least **0.4 nats below** it, which it can only
# do by using the context. That is this cell's quick check; the grader is stricter: it runs the same recipe with the
# course's own `get_batch` and `train_step` on the same text and seed, and yours must end within **0.25 nats** of it.

# %% nbgrader={"grade": true, "grade_id": "test_training_run", "locked": true, "points": 3, "schema_version": 3, "solution": false}
text = load_shakespeare()
tok = CharTokenizer(text)
ids = torch.tensor(tok.encode(text[:24_000]), dtype=torch.long)
train_ids, val_ids = ids[:20_000], ids[20_000:]
torch.manual_seed(0)
gpt = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=32, d_model=32, n_heads=2, n_layers=2))
optimizer = torch.optim.AdamW(gpt.parameters(), lr=6e-3, weight_decay=0.0)
batch_gen = torch.Generator().manual_seed(0)
t0 = time.perf_counter()
losses = [train_step(gpt, optimizer, *get_batch(train_ids, 32, 32, batch_gen)) for _ in range(150)]
eval_gen = torch.Generator().manual_seed(1)
with torch.no_grad():
    gpt.eval()
    val_loss = sum(gpt(*get_batch(val_ids, 32, 64, eval_gen))[1].item() for _ in range(4)) / 4
counts = torch.bincount(train_ids, minlength=tok.vocab_size).double() + 1  # character frequencies (add-one)
frequency_loss = -(counts / counts.sum()).log()[val_ids].mean().item()
print(f"150 steps in {time.perf_counter() - t0:.1f} s; first training loss {losses[0]:.2f}, last {losses[-1]:.2f}")
print(f"validation loss {val_loss:.2f}; frequency-only model {frequency_loss:.2f}; gap {frequency_loss - val_loss:.2f} nats")
assert losses[0] > 3.5, "the first loss should be close to ln 65 ≈ 4.17 for a fresh model: is the loss computed on the right targets?"
assert val_loss <= frequency_loss - 0.4, \
    f"the validation loss is only {frequency_loss - val_loss:.2f} nats below the frequency-only model (needs 0.4): " \
    "check the shift of the targets, zero_grad and optimizer.step()"
print("training run: visible check passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: the grader trains a fresh small GPT (its own seed and a slice
# of Tiny Shakespeare you have not seen) for 150 steps with your get_batch and train_step,
# then measures the validation loss itself; it must be within 0.25 nats of the loss the course's
# own get_batch and train_step reach on the same slice, seed and steps.
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "sample_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 5 · Sampling
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

# %% [markdown] nbgrader={"grade": false, "grade_id": "try_it", "locked": true, "schema_version": 3, "solution": false}
# **Try it (not graded).** The cell below samples 200 characters from the GPT you just trained, with your own sampler.
# After 150 steps expect word-like fragments and line breaks, not Shakespeare: lesson 09's longer run does much better.

# %% nbgrader={"grade": false, "grade_id": "demo_sample", "locked": true, "schema_version": 3, "solution": false}
idx = torch.tensor([tok.encode("ROMEO:\n")])
g = torch.Generator().manual_seed(0)
with torch.no_grad():
    for _ in range(200):
        logits, _ = gpt(idx[:, -32:])
        idx = torch.cat([idx, sample_next_token(logits[:, -1], temperature=0.8, top_k=10, generator=g)[:, None]], dim=1)
print(tok.decode(idx[0]))


# %% [markdown] nbgrader={"grade": false, "grade_id": "assemble_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Part 6 · Assemble your GPT
#
# Lesson 09's ladder built a GPT up one piece at a time. Now assemble it yourself, from your own pieces: the causal
# multi-head attention of exercise 05, the feed-forward network and the pre-LN block of exercise 06, and the embeddings
# and tied output layer of lesson 09. The `__init__` methods are given (they fix the parameter names, so the grader can
# load weights into your model); write the three `forward` methods. Paste and adapt your earlier code where you have it:
# an answer cell cannot see another notebook.
#
# | module | computes | parameters |
# |---|---|---|
# | `CausalSelfAttention` | `split` into `n_heads` heads of width `d_k`, `softmax(Q Kᵀ / √d_k)` with the **causal mask**, `V`, merge heads, `W_O` | `w_q`, `w_k`, `w_v`, `w_o` (with biases) |
# | `Block` (pre-LN) | `h = x + attn(norm1(x))`, then `h + w_2(GELU(w_1(norm2(h))))` (exact GELU, `F.gelu`) | `norm1`, `attn`, `norm2`, `w_1`, `w_2` |
# | `TinyGPT` | token embedding + position embedding (positions `0 .. L-1`), the blocks, final LayerNorm `norm_f`, then the output layer **tied** to the token embedding: `logits = x @ tok_emb.weight.T` | `tok_emb`, `pos_emb`, `blocks`, `norm_f` |
#
# `TinyGPT(idx)` returns the logits `(B, L, vocab_size)` for `idx: (B, L)` with `L <= block_size` (no loss, no dropout).
# With the same weights it must give the logits of `attnlab.nn.GPT(GPTConfig(vocab_size, block_size, d_model, n_heads,
# n_layers))` (whose `norm3` is your `norm2` and whose `ffn.w_1`, `ffn.w_2` are your `w_1`, `w_2`).

# %% nbgrader={"grade": false, "grade_id": "tiny_gpt", "locked": false, "schema_version": 3, "solution": true}
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


class TinyGPT(nn.Module):
    """Decoder-only language model in the layout of ``attnlab.nn.GPT`` (GPT-2, Radford et al. 2019).

    ``forward(idx: (B, L) long) -> logits (B, L, vocab_size)``, ``L <= block_size``: token embedding
    + learned position embedding, ``n_layers`` pre-LN blocks, final LayerNorm, output layer tied to
    the token embedding.
    """

    def __init__(self, vocab_size: int, block_size: int, d_model: int, n_heads: int, n_layers: int) -> None:
        super().__init__()
        self.tok_emb, self.pos_emb = nn.Embedding(vocab_size, d_model), nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads) for _ in range(n_layers))
        self.norm_f = nn.LayerNorm(d_model)

    def forward(self, idx: Tensor) -> Tensor:
        ### BEGIN SOLUTION
        L = idx.shape[1]
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(L, device=idx.device))  # (B, L, d_model)
        for block in self.blocks:
            x = block(x)
        return self.norm_f(x) @ self.tok_emb.weight.T  # (B, L, V): the tied output layer
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_tiny_gpt", "locked": true, "points": 3, "schema_version": 3, "solution": false}
def tiny_from_gpt(gpt):
    """The state of attnlab.nn.GPT `gpt` under TinyGPT's parameter names."""
    names = {"pos_emb.emb.": "pos_emb.", ".self_attn.": ".attn.", ".ffn.": ".", ".norm3.": ".norm2."}
    state = {}
    for key, value in gpt.state_dict().items():
        if key == "lm_head.weight":
            continue  # the tied output layer IS tok_emb.weight
        for old, new in names.items():
            key = key.replace(old, new)
        state[key] = value
    return state


torch.manual_seed(0)
ref_gpt = GPT(GPTConfig(vocab_size=13, block_size=10, d_model=16, n_heads=4, n_layers=2)).eval()
with torch.no_grad():
    for p in ref_gpt.parameters():
        p.add_(0.3 * torch.randn_like(p))  # weights of a trained-looking model, not the tiny initial ones
mine = TinyGPT(vocab_size=13, block_size=10, d_model=16, n_heads=4, n_layers=2).eval()
mine.load_state_dict(tiny_from_gpt(ref_gpt))
idx = torch.randint(13, (3, 7))  # L = 7 < block_size
with torch.no_grad():
    logits = mine(idx)
    expected = ref_gpt(idx)[0]
    changed = idx.clone()
    changed[:, 4:] = (changed[:, 4:] + 1) % 13  # change the last 3 tokens only
    early = mine(changed)[:, :4]
assert isinstance(logits, torch.Tensor) and tuple(logits.shape) == (3, 7, 13), \
    f"TinyGPT(idx) must return the logits (B, L, vocab_size) = (3, 7, 13), got {getattr(logits, 'shape', type(logits))}"
assert torch.allclose(early, logits[:, :4], atol=1e-5), \
    "changing tokens 4..6 changed the logits at positions 0..3: the attention must use the causal mask"
assert torch.allclose(logits, expected, atol=1e-4), \
    f"your logits differ from attnlab.nn.GPT's with the same weights (max abs difference " \
    f"{(logits - expected).abs().max():.3g}): check the 1/√d_k scale, the head split, pre-LN, GELU, positions and norm_f"
print("TinyGPT: visible checks passed")

### BEGIN HIDDEN TESTS
# Graded outside your kernel: TinyGPT is built with fresh sizes (several heads, one or two layers,
# L up to block_size), loaded with random weights, and its logits are compared with those of
# attnlab.nn.GPT holding the same weights.
### END HIDDEN TESTS
