# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: -all
#     notebook_metadata_filter: kernelspec,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %%
from attnlab.practice import gate

gate("09")

# %% [markdown]
# # Lesson 09 · Capstone: train your own GPT
#
# Everything from the course comes together here. You will train a **character-level GPT** on about a
# million characters of Shakespeare, sample new "Shakespeare" from it, save and reload it, and then
# look inside to see what its attention heads learned.
#
# The plan:
#
# 1. **Data**: characters → ids, a 90/10 train/validation split, and batches for teacher forcing.
# 2. **Model**: `attnlab.nn.GPT`, the decoder-only Transformer you assembled in lessons 05–08, and a
#    **ladder** that builds it up piece by piece (bigram → one head → multi-head → + feed-forward →
#    + residuals and LayerNorm → a stack of blocks) to measure what each piece buys.
# 3. **Training**: AdamW, warm-up and cosine decay, a progress bar and a live loss plot.
# 4. **Checkpoints**: save, reload, and check the reloaded model is exactly the same.
# 5. **Sampling**: temperature and top-k, with sliders.
# 6. **Looking inside**: attention heatmaps for every layer and head, and a measurement of which heads
#    track the previous character, spaces or line breaks.
#
# Three run sizes, chosen in the next cell:
#
# | run | what | time |
# |---|---|---|
# | `"ci"` (automatic when `ATTNLAB_CI=1`) | tiny model, 120 steps: exercises every cell | seconds |
# | `"default"` | 4 layers, 4 heads, $d_\text{model}$ = 128, context 64, 2000 steps of 12 sequences | target: validation loss **< 2.0**; about 80 CPU-seconds of work: **3 to 5 minutes on a shared 2-core machine** (measured: 3.0 min at load average 5.2, 5.0 min at 8.2, 6.8 min at 12.9; section 7), 1 to 2 minutes on a quiet one |
# | `"large"` | 6 layers, 6 heads, $d_\text{model}$ = 384, context 256, dropout 0.2, 5000 steps of 64 | for a GPU (used automatically when present); about an hour or more on a CPU |
#
# The default run is nanoGPT's documented CPU recipe for Shakespeare characters, which reaches a
# validation loss of about 1.88 there; `benchmarks/bench_capstone.py` runs the same recipe with
# attnlab and records time, speed and loss in `benchmarks/RESULTS.md`.

# %%
# %matplotlib inline
import dataclasses
import os
import time
from pathlib import Path

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import torch

from attnlab.data import CharTokenizer, get_batch, load_shakespeare, train_val_split
from attnlab.nn import GPT, GPTConfig, count_parameters
from attnlab.training import TrainConfig, default_device, is_ci, load_checkpoint, lr_at, save_checkpoint, train
from attnlab.fast import apply_thread_policy, machine_policy, to_fast
from attnlab.fast.timing import claim
from attnlab.viz_model import (LiveLossPlot, attention_maps, head_pattern_scores, name_heads,
                               plot_attention_grid, plot_loss_curves)

RUN = "ci" if is_ci() else "default"  # change to "large" for the bigger model (GPU recommended)
plt.rcParams["figure.dpi"] = 100
torch.manual_seed(1337)
print(f"run size: {RUN} | device available: {default_device()} | torch threads: {torch.get_num_threads()}")

# %% [markdown]
# ## 1 · Data
#
# A character-level model reads one character per position. The tokenizer is just a sorted list of
# the distinct characters in the text: each character's id is its index.

# %%
text = load_shakespeare()
tok = CharTokenizer(text)
print(f"{len(text):,} characters, vocabulary of {tok.vocab_size}: {''.join(tok.chars)!r}")
print(text[:250])

# %%
ids = tok.encode("To be, or not")
print(ids, "->", repr(tok.decode(ids)))
data = torch.tensor(tok.encode(text), dtype=torch.long)  # (N,)
train_data, val_data = train_val_split(data, 0.9)  # first 90 % / last 10 %, no shuffling
print(f"train {len(train_data):,} ids, validation {len(val_data):,} ids")

# %% [markdown]
# The split is **contiguous**, not shuffled: the validation text is the last tenth of the file,
# passages the model never trains on. Shuffled windows would let overlapping text leak into both sets.
#
# ### Batches and teacher forcing
#
# `get_batch` cuts `batch_size` random windows of `block_size` characters. The targets `y` are the
# inputs `x` shifted by one: at every position $t$ the model sees $x_{\le t}$ and must predict
# $x_{t+1}$. One window of length $L$ therefore gives $L$ training examples at once (lesson 08's
# teacher forcing, made possible by the causal mask).

# %%
gen = torch.Generator().manual_seed(0)
x, y = get_batch(train_data, block_size=16, batch_size=4, generator=gen)  # (B, L) each
print("x shape", tuple(x.shape), "| y shape", tuple(y.shape))
print("x[0]:", repr(tok.decode(x[0])))
print("y[0]:", repr(tok.decode(y[0])))
for t in range(4):
    print(f"  context {tok.decode(x[0, :t + 1])!r:<8} -> target {tok.decode(y[0, t:t + 1])!r}")

# %% [markdown]
# ### Two reference losses
#
# Loss is the cross-entropy in nats per character. Two numbers frame what "good" means:
#
# * a model that gives all 65 characters equal probability scores $\ln 65 \approx 4.17$;
# * the best model that ignores context and only knows how frequent each character is scores the
#   **entropy of the character frequencies**. Anything below that needs context, i.e. attention.

# %%
counts = torch.bincount(train_data, minlength=tok.vocab_size).double()
freq = counts / counts.sum()
uniform_loss = float(np.log(tok.vocab_size))
unigram_loss = float(-(freq[freq > 0] * freq[freq > 0].log()).sum())
print(f"uniform model: {uniform_loss:.3f} nats   frequency-only model: {unigram_loss:.3f} nats")

order = torch.argsort(freq, descending=True)
fig, ax = plt.subplots(figsize=(11, 3))
ax.bar(range(tok.vocab_size), freq[order])
labels = ["␣" if tok.chars[i] == " " else repr(tok.chars[i])[1:-1] for i in order.tolist()]  # visible whitespace
ax.set_xticks(range(tok.vocab_size), labels, fontsize=7)
ax.set_yscale("log")
ax.set(ylabel="frequency", title="character frequencies in the training text (space and 'e' lead, newline is common)")
plt.show()

# %% [markdown]
# ## 2 · The model
#
# `GPT` is token embedding + learned position embedding → `n_layers` pre-LN decoder blocks (causal
# multi-head self-attention and a GELU feed-forward network, each with a residual connection) → final
# LayerNorm → a linear layer back to the vocabulary that **shares** the token-embedding matrix.

# %%
from attnlab.diagrams import gpt_stack

gpt_stack()
plt.show()

# %%
CONFIGS = {
    "ci": GPTConfig(vocab_size=tok.vocab_size, block_size=32, d_model=64, n_heads=4, n_layers=2, bias=False),
    "default": GPTConfig(vocab_size=tok.vocab_size, block_size=64, d_model=128, n_heads=4, n_layers=4,
                         dropout=0.0, bias=False),
    "large": GPTConfig(vocab_size=tok.vocab_size, block_size=256, d_model=384, n_heads=6, n_layers=6,
                       dropout=0.2, bias=False),
}
TRAINING = {
    "ci": TrainConfig(max_iters=120, batch_size=16, learning_rate=3e-3, min_lr=3e-4, warmup_iters=10,
                      eval_interval=40, eval_iters=4),
    "default": TrainConfig(max_iters=2000, batch_size=12, learning_rate=1e-3, min_lr=1e-4, warmup_iters=100,
                           eval_interval=250, eval_iters=20),
    "large": TrainConfig(max_iters=5000, batch_size=64, learning_rate=1e-3, min_lr=1e-4, warmup_iters=100,
                         eval_interval=250, eval_iters=200),
}
config, train_cfg = CONFIGS[RUN], TRAINING[RUN]
torch.manual_seed(1337)
model = GPT(config)
print(config)
print(f"parameters: {count_parameters(model):,}")

# %% [markdown]
# **Counting the parameters by hand** (with $d = d_\text{model}$, $V$ = vocabulary, $T$ = `block_size`,
# $\beta = 1$ if the linear and LayerNorm layers have biases, else 0):
#
# * embeddings: $V d + T d$ (the output layer reuses the $V \times d$ token matrix: weight tying);
# * per block: attention $4 d^2 + 4\beta d$, feed-forward $2 \cdot d \cdot 4d + \beta(4d + d)$, two
#   LayerNorms $2(d + \beta d)$;
# * final LayerNorm: $d + \beta d$.

# %%
d, V, T, n, beta = config.d_model, config.vocab_size, config.block_size, config.n_layers, int(config.bias)
by_hand = V * d + T * d + n * (4 * d * d + 4 * beta * d + 8 * d * d + 5 * beta * d + 2 * (d + beta * d)) + d + beta * d
print(f"by hand: {by_hand:,}   count_parameters: {count_parameters(model):,}")

# %% [markdown]
# Before training, the model should be close to the uniform guess, $\ln 65 \approx 4.17$. If your
# untrained loss is much higher, the initialisation is too large (confidently wrong predictions).

# %%
xb, yb = get_batch(train_data, config.block_size, 8, generator=torch.Generator().manual_seed(1))
with torch.no_grad():
    logits, loss = model(xb, yb)
print(f"logits {tuple(logits.shape)} = (B, L, V); untrained loss {loss.item():.3f} vs ln V = {uniform_loss:.3f}")

# %% [markdown]
# ### Building it up: the ladder
#
# `GPT` has many pieces: embeddings, attention, several heads, a feed-forward network, residual
# connections, LayerNorm, a stack of blocks. Which of them matter? The **ladder** answers by
# experiment: it builds the model one piece at a time and trains every rung the same way (same seed,
# same batches, same number of steps), then compares the validation losses. `attnlab.ladder` builds
# each rung from `attnlab.nn`'s modules:
#
# | rung | what it adds |
# |---|---|
# | uniform | nothing: every character equally likely (the $\ln V$ line) |
# | bigram | a $V \times V$ table: the next character from the current one only |
# | 1 head | embeddings + position + **one causal attention head** of width $d_\text{model}$: context |
# | multi-head | the same parameters split into **4 heads** of width $d_k = d_\text{model}/4$ |
# | + FFN | a **feed-forward network** after the attention (no residuals yet) |
# | + residual & LN | one pre-LN **block**: $x + \text{Attn}(\text{LN}(x))$, $x + \text{FFN}(\text{LN}(x))$, final LN |
# | block stack | 4 such blocks: the GPT of this lesson, in small |
#
# Every rung is small ($d_\text{model} = 64$, context 32) and trains for 300 steps (150 in the automated
# test run, `ATTNLAB_CI=1`). **Expected time of the next cell: one to two minutes** on a shared 2-core machine
# (measured: 76 s for the six rungs at load average 15, one torch thread), less on a quiet one. Two
# dashed lines give scale: the frequency-only model from above, and the **best possible bigram**,
# computed from counts of character pairs in the training text.

# %%
from attnlab.ladder import RUNG_LABELS, Components, LadderConfig, check_components, train_ladder

ladder_cfg = LadderConfig(vocab_size=tok.vocab_size, block_size=32, d_model=64, n_heads=4, n_layers=4,
                          steps=150 if is_ci() else 300, batch_size=16, learning_rate=1e-2, seed=1337)

# the best bigram: next-character frequencies after each character (add-one smoothing), scored on validation
pairs = torch.bincount(train_data[:-1] * tok.vocab_size + train_data[1:], minlength=tok.vocab_size ** 2)
pair_probs = (pairs.double().view(tok.vocab_size, tok.vocab_size) + 1)
pair_probs /= pair_probs.sum(dim=1, keepdim=True)  # row c: p(next | current = c)
bigram_counts_loss = float(-pair_probs[val_data[:-1], val_data[1:]].log().mean())

t0 = time.perf_counter()
ladder = train_ladder(train_data, val_data, ladder_cfg, callback=lambda r: print(
    f"{r.label:>16}: validation {r.val_loss:.3f}  ({r.n_params:>7,} parameters, {r.seconds:.1f} s)"))
print(f"ladder of {len(ladder)} rungs, {ladder_cfg.steps} steps each: {time.perf_counter() - t0:.0f} s; "
      f"best possible bigram {bigram_counts_loss:.3f}, frequency-only {unigram_loss:.3f}")

# %%
fig, (ax_curve, ax_bar) = plt.subplots(1, 2, figsize=(12, 4), gridspec_kw={"width_ratios": [1.2, 1]})
colors = plt.cm.viridis(np.linspace(0, 0.9, len(ladder)))
for color, r in zip(colors, ladder.values()):
    ax_curve.plot(r.history["iter"], r.history["val"], "o-", color=color, ms=3, label=r.label)
ax_curve.set(xlabel="step", ylabel="validation loss (nats / char)", title="every rung: same seed, batches and steps")
ax_curve.legend(fontsize=8)
finals = [r.val_loss for r in ladder.values()]
bars = ax_bar.bar(range(len(ladder)), finals, color=colors)
ax_bar.bar_label(bars, fmt="%.2f", fontsize=8)
ax_bar.set_xticks(range(len(ladder)), [r.label for r in ladder.values()], rotation=30, ha="right", fontsize=8)
for ax in (ax_curve, ax_bar):
    ax.axhline(unigram_loss, color="tab:purple", ls="--", lw=1, label=f"frequency-only {unigram_loss:.2f}")
    ax.axhline(bigram_counts_loss, color="tab:red", ls="--", lw=1, label=f"best bigram {bigram_counts_loss:.2f}")
    ax.grid(alpha=0.3, axis="y")
ax_bar.set(ylim=(2.0, 4.4), ylabel="final validation loss", title="what each piece buys")
ax_bar.legend(fontsize=8, loc="upper right")
fig.tight_layout()
plt.show()

# %% [markdown]
# Read it from left to right (the cell below prints this run's numbers and checks each claim):
#
# * **uniform** is exactly $\ln V$: no parameters, nothing to learn.
# * **bigram** learns the pair statistics, but slowly: each step only touches the rows of the
#   characters in the batch, so after a few hundred steps it is still well above the best possible
#   bigram.
# * **one attention head** already beats the trained bigram: with positions and causal attention the
#   prediction can use the whole context, and the embeddings are shared by every position.
# * **multi-head** has exactly the same number of parameters, only split into heads: several
#   narrower attention patterns per position do better than one wide one.
# * **+ FFN without residuals** adds parameters yet does *not* help (in our runs it was even worse): a deeper
#   plain stack of layers is harder to optimise, and nothing carries the embedding past the new layer.
# * **+ residual & LayerNorm** turns the same pieces into a block that trains well: the residual
#   stream keeps every layer's input available and LayerNorm keeps the scales in check.
# * **the block stack** (4 blocks) is the clear winner; the cell below prints by how much. Lesson 10
#   returns to what depth and width cost.

# %%
loss = {name: r.val_loss for name, r in ladder.items()}
print(f"uniform {loss['uniform']:.4f} = ln {tok.vocab_size} = {np.log(tok.vocab_size):.4f}")
print(f"bigram {loss['bigram']:.2f} vs best bigram {bigram_counts_loss:.2f} | 1 head {loss['one_head']:.2f} | "
      f"multi-head {loss['multi_head']:.2f} | + FFN {loss['ffn']:.2f} | + residual & LN {loss['residual_ln']:.2f} | "
      f"stack {loss['stack']:.2f}")
assert abs(loss["uniform"] - np.log(tok.vocab_size)) < 1e-4
assert loss["bigram"] < loss["uniform"] and loss["bigram"] > bigram_counts_loss
assert loss["one_head"] < loss["bigram"]
assert ladder["one_head"].n_params == ladder["multi_head"].n_params and loss["multi_head"] < loss["one_head"]
assert loss["ffn"] > loss["multi_head"] - 0.02  # no gain without residuals
assert loss["residual_ln"] < min(loss["ffn"], loss["multi_head"]) and loss["stack"] < loss["residual_ln"]
assert not any(r.leaks_future for r in ladder.values())
print(f"the block stack is {loss['bigram'] - loss['stack']:.2f} nats below the trained bigram and "
      f"{loss['residual_ln'] - loss['stack']:.2f} below a single block")

# %% [markdown]
# ### Plug in your own pieces
#
# The rungs take your own implementations from the exercises through `Components`: `attention`
# (exercise 02's `scaled_dot_product_attention(q, k, v, mask)`), `mha` (exercise 05's
# `MultiHeadAttention` class), `ffn` (exercise 06's `FeedForward` class) and `block_forward`
# (exercise 06's `block_forward`). Each piece gets the weights the reference piece was initialised
# with, so a correct piece reproduces the losses above, and `check_components` compares each piece
# with `attnlab.nn` on random inputs first. Paste your code into a cell and run, for example:
#
# ```python
# mine = Components(attention=scaled_dot_product_attention, ffn=FeedForward)  # your definitions
# print(check_components(mine) or "every piece matches attnlab.nn")
# mine_ladder = train_ladder(train_data, val_data, ladder_cfg, mine, rungs=("multi_head", "ffn", "stack"))
# ```
#
# Here is what a classic bug looks like on the ladder: attention that **ignores the mask**. The check
# names the problem, the perturbation probe (`leaks_future`, lesson 07's causality test) confirms it,
# and the trained "+ residual & LN" rung shows the symptom: a validation loss far *below* the correct
# rung's. Every position can read the character it is supposed to predict, and once the model has
# learned to copy it the loss collapses towards zero. That takes a few hundred steps (before it, the
# two losses are close and either can be lower), so this cell trains the buggy rung and the correct
# one side by side for 600 steps with the same seed and batches; the cell prints both losses and the
# gap. A loss that is too good to be true is a reason to check the mask, not to celebrate. The cell
# trains two rungs: well under a minute on a shared 2-core machine.

# %%
def attention_without_mask(q, k, v, mask=None):  # a buggy "exercise 02" answer: the mask is never used
    weights = (q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5).softmax(dim=-1)
    return weights @ v, weights


buggy = Components(attention=attention_without_mask)
for problem in check_components(buggy):
    print("check_components:", problem)
leak_cfg = dataclasses.replace(ladder_cfg, steps=600)  # long enough for the copying to be learned
t0 = time.perf_counter()
correct = train_ladder(train_data, val_data, leak_cfg, rungs=("residual_ln",))["residual_ln"]
leaky = train_ladder(train_data, val_data, leak_cfg, buggy, rungs=("residual_ln",))["residual_ln"]
print(f"'+ residual & LN' rung, {leak_cfg.steps} steps: buggy attention {leaky.val_loss:.3f}, "
      f"correct attention {correct.val_loss:.3f}; the buggy one reads the future: {leaky.leaks_future} "
      f"({time.perf_counter() - t0:.0f} s for the two rungs)")
claim(leaky.leaks_future and not correct.leaks_future and leaky.val_loss < correct.val_loss - 1.0,
      "attention that ignores the mask reads the future and scores a validation loss more than a nat "
      "below the correct rung's",
      f"gap {correct.val_loss - leaky.val_loss:.3f} nats; leaks_future={leaky.leaks_future}")

# %% [markdown]
# ## 3 · Training
#
# One optimisation step: take a batch, compute the mean next-character cross-entropy over all
# $B \cdot L$ positions, backpropagate, clip the gradient norm to 1, and take an **AdamW** step. Weight
# decay (0.1) applies to the weight matrices only. The learning rate warms up linearly for 100 steps
# (large early updates with Adam's still-noisy statistics can derail training), then follows a cosine
# down to a tenth of its peak:

# %%
steps = np.arange(train_cfg.max_iters)
fig, ax = plt.subplots(figsize=(6, 2.6))
ax.plot(steps, [lr_at(int(s), train_cfg) for s in steps])
ax.set(xlabel="step", ylabel="learning rate", title=f"schedule of the '{RUN}' run")
ax.grid(alpha=0.3)
plt.show()

# %% [markdown]
# Now train. The progress bar shows the step rate; the plot below it redraws at every evaluation
# (train and validation loss, each averaged over `eval_iters` random batches).
#
# **Expected time of the next cell** (the default run): **3 to 5 minutes on a shared 2-core machine** (measured on the
# course's machine: 3.0 min at load average 5.2, 5.0 min at 8.2, 6.8 min at 12.9; the table in section 7), 1 to 2
# minutes on a quiet one, seconds for the `"ci"` run. When it ends it prints its own time, the load it ran under and
# the share of a CPU it got.

# %%
live = LiveLossPlot(target=None if RUN == "ci" else 2.0)
t0, cpu0 = time.perf_counter(), time.process_time()
result = train(model, train_data, val_data, train_cfg, callback=live)
minutes, cpu_s = (time.perf_counter() - t0) / 60, time.process_time() - cpu0
print(f"{result.iters_done} steps in {minutes:.2f} min on {train_cfg.resolved_device()} "
      f"({1000 / result.median_ms_per_iter:.1f} steps/s, median)")
print(f"final loss: train {result.final_train_loss:.3f}, validation {result.final_val_loss:.3f}")
if RUN == "default":  # the target is about the model; the time depends on the machine, so report it apart
    claim(result.final_val_loss < 2.0, "the default run reaches a validation loss below 2.0",
          f"validation {result.final_val_loss:.3f} after {result.iters_done} steps")
    print(f"time: {minutes:.1f} min with {result.settings}; load average now {os.getloadavg()[0]:.1f}")
    print(f"the run's work: {cpu_s:.0f} CPU-seconds; this kernel got {cpu_s / (60 * minutes):.0%} of a CPU on average "
          f"(a busy machine shares its CPUs out: the same work, more minutes, the same loss)")

# %%
ax = plot_loss_curves(result.history, title=f"'{RUN}' run")
ax.axhline(uniform_loss, color="tab:red", ls=":", label=f"uniform ln 65 = {uniform_loss:.2f}")
ax.axhline(unigram_loss, color="tab:purple", ls=":", label=f"frequencies only = {unigram_loss:.2f}")
if RUN != "ci":
    ax.axhline(2.0, color="grey", ls="--", label="target 2.0")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# Read the curves: both drop quickly below the frequency-only line (the model starts using context)
# and keep improving. While validation follows training closely the model is not overfitting; a gap
# that keeps growing would be the signal to stop or add dropout (the large run uses 0.2).
#
# ## 4 · Checkpoints
#
# A checkpoint stores the model's `GPTConfig`, its weights, the optimiser state and the step, so a run
# can be resumed or the model reloaded later without the notebook. They go to a `checkpoints/` folder,
# which git ignores. Reloading must give **identical** logits, bit for bit:

# %%
if is_ci():  # the automated test run keeps the repository clean
    from attnlab.settings import course_settings
    checkpoint_dir = course_settings().home_dir / "checkpoints"
else:
    checkpoint_dir = Path("checkpoints")
path = save_checkpoint(checkpoint_dir / f"capstone_{RUN}.pt", model, result.optimizer, step=result.iters_done,
                       extra={"val_loss": result.final_val_loss, "chars": "".join(tok.chars)})
print(f"saved {path} ({path.stat().st_size / 1e6:.1f} MB)")

reloaded, step, extra = load_checkpoint(path)  # rebuilds GPT from the stored config (on the CPU)
device = next(model.parameters()).device  # compare on one device: CPU and GPU round differently
reloaded = reloaded.to(device)
model.eval(), reloaded.eval()
probe = val_data[: config.block_size][None].to(device)  # (1, L)
with torch.no_grad():
    same = torch.equal(model(probe)[0], reloaded(probe)[0])
print(f"reloaded step {step}, stored val loss {extra['val_loss']:.3f}, identical logits: {same}")
assert same

# %% [markdown]
# ## 5 · Sampling
#
# `GPT.generate` repeats: run the model on the context (the last `block_size` characters), take the
# logits of the last position, divide by the **temperature**, optionally keep only the **top-k**
# characters, sample one, append it. Low temperature gives safer, more repetitive text; high
# temperature gives more variety and more misspellings.
#
# **Does the KV cache (lesson 08) help here?** Only while the text fits in the context window. The
# model has *learned absolute* position embeddings: position 0 of the window has its own vector.
# Once the text is longer than `block_size`, the window slides by one character per step, every
# character moves to a new position, and all cached keys and values (computed with the old positions)
# are stale. `generate` then rebuilds the cache from the whole window at each step: the model runs
# exactly as many positions as without a cache, so nothing is left to save (filling the cache even
# adds a little bookkeeping). So the cache pays off for the first `block_size` characters and not
# after; models that generate long texts use positions that do not shift (rotary or relative
# positions, lesson 04) so that the cache stays valid.
#
# The cell below checks both regimes in two ways. It **counts** the positions the model runs (a
# count, the same on every machine), and it **times** generation with and without the cache in
# back-to-back pairs, alternating which goes first, several times. A model this small spends much of
# each step on fixed per-call work, so the time saved is far smaller than the positions saved; and on
# a busy shared machine a single timing can swing by 2–3× either way. Read the median of the paired
# speed-ups with its range, and trust a speed-up (or a slow-down) only when the whole range is on one
# side of 1. On the course's 2-core machine at load average 11 (one torch thread, the default model
# untrained: speed does not depend on the weights), 5 pairs each gave: while the text fits the window,
# 3.0x faster with the cache (range 2.6–3.8x); once the window slides, 1.05x (range 0.82–1.07x), no clear
# difference. Your run prints its own figures and the load it ran under; the counts it checks against this text.
# **Expected time of the timing cell** (the second cell below): under half a minute on a shared 2-core machine
# (measured at load average 14, one torch thread).

# %%
model = model.cpu().eval()


def sample(prompt="ROMEO:\n", n_new=200, temperature=0.8, top_k=None, seed=0):
    idx = torch.tensor([tok.encode(prompt)], dtype=torch.long)  # (1, T)
    out = model.generate(idx, n_new, temperature=temperature, top_k=top_k,
                         generator=torch.Generator().manual_seed(seed))
    return tok.decode(out[0])


for temperature, top_k in ((0.5, None), (1.0, None), (1.0, 10)):
    print(f"=== temperature {temperature}, top_k {top_k} ===")
    print(sample(temperature=temperature, top_k=top_k, n_new=120))

# %%
PAIRS = 3 if is_ci() else 5  # back-to-back timing pairs per setting


def cache_speedup(prompt_len, n_new, pairs=PAIRS):
    """KV cache with vs without, for greedy generation of n_new characters after prompt_len characters.

    Returns (work, speed-ups): work = positions the model runs without the cache / with it (counted by
    a forward hook, machine-independent); speed-ups = time without / time with, one per back-to-back
    pair (the order alternates, so a burst of load hits both runs of a pair alike)."""
    prompt = val_data[:prompt_len][None]  # (1, prompt_len)
    seen = []  # positions fed to the model, one entry per forward call
    hook = fast_model.register_forward_pre_hook(lambda mod, args: seen.append(args[0].shape[1]))
    work = {}
    try:
        for use_cache in (True, False):
            seen.clear()
            fast_model.generate(prompt, n_new, greedy=True, use_cache=use_cache)
            work[use_cache] = sum(seen)
    finally:
        hook.remove()
    ratios = []
    for i in range(pairs):
        t = {}
        for use_cache in ((True, False) if i % 2 == 0 else (False, True)):
            t0 = time.perf_counter()
            fast_model.generate(prompt, n_new, greedy=True, use_cache=use_cache)
            t[use_cache] = time.perf_counter() - t0
        ratios.append(t[False] / t[True])
    return work[False] / work[True], ratios


# Generation runs on the model's fast twin (same weights, the decode path tuned for one token at a
# time), with the thread count the machine policy picks: on a busy machine two threads fight over the
# cores and hide what the cache saves.
fast_model = to_fast(model).eval()
apply_thread_policy(machine_policy())
T_ctx = config.block_size
for label, (prompt_len, n_new) in (("while the text fits the window", (1, T_ctx - 1)),
                                   ("once the window slides", (T_ctx, 2 * T_ctx))):
    work, ratios = cache_speedup(prompt_len, n_new)
    verdict = ("faster with the cache" if min(ratios) > 1 else "slower with the cache" if max(ratios) < 1
               else "no clear difference in this run")
    saved = f"{work:.0f}x fewer positions" if work > 1.05 else "as many positions as without it"
    print(f"{label}: with the cache the model runs {saved}; time without / with, median "
          f"{np.median(ratios):.2f}x over {len(ratios)} pairs (range {min(ratios):.2f}–{max(ratios):.2f}x): {verdict}")
    claim(work > 1.05 if prompt_len == 1 else work < 1.05,
          f"{label}, the cache {'saves positions' if prompt_len == 1 else 'saves no positions'}",
          f"positions without / with the cache: {work:.2f}")
print(f"timed on {os.cpu_count()} CPUs, {torch.get_num_threads()} torch thread(s), load average {os.getloadavg()[0]:.1f}")


# %% [markdown]
# ### Try it: sample with sliders
#
# Type a prompt (only characters from the vocabulary), then move the sliders: temperature, top-k
# (0 = off), the number of new characters and the random seed. Each change generates fresh text. Look
# for: words that are real English, speaker names followed by a colon and a newline, line lengths
# that look like verse.

# %%
def sample_panel(prompt="JULIET:\n", temperature=0.8, top_k=0, n_new=200, seed=0):
    try:
        print(sample(prompt, n_new, temperature, top_k or None, seed))
    except ValueError as err:  # e.g. a character outside the vocabulary
        print("Cannot sample:", err)


widgets.interact(
    sample_panel,
    prompt=widgets.Text(value="JULIET:\n", description="prompt"),
    temperature=widgets.FloatSlider(value=0.8, min=0.1, max=2.0, step=0.1, description="temperature"),
    top_k=widgets.IntSlider(value=0, min=0, max=tok.vocab_size, description="top-k"),
    n_new=widgets.IntSlider(value=200, min=20, max=600, step=20, description="characters"),
    seed=widgets.IntSlider(value=0, min=0, max=20, description="seed"),
);

# %% [markdown]
# ## 6 · Looking inside: what did the heads learn?
#
# `attention_maps` runs the model once and records every layer's `(B, H, L, L)` attention weights
# (it asks each `MultiHeadAttention` for `need_weights=True`, which takes the explicit path). Below:
# one heatmap per layer (rows) and head (columns) for a line of the play. Rows are the character
# doing the attending, columns the characters it attends to; everything above the diagonal is 0
# because of the causal mask.

# %%
sentence = "To be, or not to be:\nthat"[: config.block_size]
idx = torch.tensor([tok.encode(sentence)])  # (1, L)
maps = attention_maps(model, idx)  # n_layers × (1, H, L, L)
fig = plot_attention_grid(maps, list(sentence))
fig.suptitle(f"attention weights of the '{RUN}' model for {sentence!r}")  # constrained layout places it
plt.show()

# %% [markdown]
# What the recorded default run (2000 steps, validation loss 1.92) showed, and what to look for in yours:
#
# * **local heads** (layer 0, and again in layers 2–3): a bright band along the diagonal, each
#   character attending to itself and the one or two characters before it;
# * **word-boundary heads** (layer 1, heads 0 and 1 in our run): vertical stripes at the **spaces**:
#   every character of a word looks back at the space where the word began;
# * heads that spread their weight more widely, or lock onto the newline or punctuation.
#
# The CI run trains for only 120 steps, so its patterns are cruder.
#
# Eyeballing is not measuring. For each head we average, over many positions of held-out text:
#
# * the weight on the **previous character** ($j = i - 1$);
# * the weight on **spaces**, **newlines** and **punctuation**, compared with what a head that spread
#   its weight uniformly over the visible keys would put there.

# %%
n_seq = 4 if RUN == "ci" else 16
starts = torch.arange(n_seq) * 997 % (len(val_data) - config.block_size)
windows = torch.stack([val_data[s:s + config.block_size] for s in starts.tolist()])  # (n_seq, L)
texts = [tok.decode(w) for w in windows]
scores = head_pattern_scores(attention_maps(model, windows), texts)
names = name_heads(scores)

rows = []
for layer in range(config.n_layers):
    for head in range(config.n_heads):
        rows.append((layer, head, scores["previous"][layer, head], scores["space"][layer, head],
                     scores["newline"][layer, head], names[layer, head]))
print(f"uniform head would give: space {scores['uniform_space'][0, 0]:.3f}, newline {scores['uniform_newline'][0, 0]:.3f}")
print(f"{'layer':>5} {'head':>4} {'previous':>9} {'space':>7} {'newline':>8}  name")
for layer, head, prev, space, newline, name in rows:
    print(f"{layer:>5} {head:>4} {prev:>9.3f} {space:>7.3f} {newline:>8.3f}  {name}")
print(f"largest previous-character share of any head in this run: {scores['previous'].max():.0%}")

fig, axes = plt.subplots(1, 3, figsize=(12, 3))
for ax, key in zip(axes, ("previous", "space", "newline")):
    im = ax.imshow(scores[key], cmap="Blues", vmin=0, vmax=max(0.5, float(scores[key].max())))
    ax.set(title=f"weight on {key}" + ("" if key == "previous" else f" (uniform ≈ {scores['uniform_' + key][0, 0]:.2f})"),
           xlabel="head", ylabel="layer", xticks=range(config.n_heads), yticks=range(config.n_layers))
    for (i, j), value in np.ndenumerate(scores[key]):
        ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8,
                color="white" if value > 0.6 * ax.images[0].norm.vmax else "black")
fig.tight_layout()
plt.show()


# %% [markdown]
# A head gets a name when one pattern clearly dominates (`name_heads`): at least 40 % of its weight
# on the previous character ("previous-token") or on itself ("self"); more than twice the uniform
# share, and at least 20 %, on a character class ("space", "newline", "punctuation"); at least 50 %
# on itself and the previous character together ("local"); otherwise "mixed". In the recorded default
# run the previous character got at most about 30 % in any single head (the table above gives this
# run's maximum): the model spreads "what came just before" over local heads rather than one sharp
# **previous-token head**. The space heads are the
# clearest: they tell every position where the current word began, which a character model needs
# to spell words. Larger models trained longer tend to grow sharper previous-token heads, the first
# step of copying mechanisms.
#
# Keep lesson 10's warning in mind: these numbers say where weight goes, not what the head
# *contributes* to the prediction; that depends on the value vectors too.
#
# ### Try it: one head at a time
#
# Pick a layer and head and type your own text (at most `block_size` characters from the
# vocabulary). The heatmap shows that head's weights and its previous-token share for your text.

# %%
def head_panel(text="ROMEO:\nWhat light is this?", layer=0, head=0):
    text = text[: config.block_size]
    try:
        ids = torch.tensor([tok.encode(text)])  # (1, L)
    except ValueError as err:
        print("Cannot encode:", err)
        return
    if ids.shape[1] < 2:
        print("Type at least two characters.")
        return
    weights = attention_maps(model, ids)[layer][0, head]  # (L, L)
    prev = weights[torch.arange(1, len(text)), torch.arange(len(text) - 1)].mean()
    fig, ax = plt.subplots(figsize=(6.5, 5.5))
    shown = ["␣" if c == " " else ("\\n" if c == "\n" else c) for c in text]
    im = ax.imshow(weights, cmap="Blues", vmin=0, vmax=1)
    ax.set_xticks(range(len(text)), shown, fontsize=7)
    ax.set_yticks(range(len(text)), shown, fontsize=7)
    ax.set(xlabel="key (attended to)", ylabel="query (attending)",
           title=f"layer {layer}, head {head} ({names[layer, head]}): previous-char weight {prev:.2f}")
    fig.colorbar(im, ax=ax)
    plt.show()


widgets.interact(
    head_panel,
    text=widgets.Text(value="ROMEO:\nWhat light is this?", description="text"),
    layer=widgets.IntSlider(value=0, min=0, max=config.n_layers - 1, description="layer"),
    head=widgets.IntSlider(value=0, min=0, max=config.n_heads - 1, description="head"),
);

# %% [markdown]
# ## 7 · Going further: the larger configuration
#
# Set `RUN = "large"` in the setup cell and run the notebook again. The large configuration is
# nanoGPT's GPU recipe for this data set: 6 layers, 6 heads, $d_\text{model} = 384$ (about 10.7 M
# parameters), a context of 256 characters, dropout 0.2 and 5000 steps of 64 sequences. `train` moves
# the model to the GPU automatically when one is available (`TrainConfig(device="auto")`) and trains
# there under bf16 autocast. On one H100 the whole run took 83–110 seconds and reached a best
# validation loss of 1.463–1.470 (nanoGPT reports 1.4697; `benchmarks/gpu_large.py`), and
# `TrainConfig(compile="reduce-overhead")` (`torch.compile` with CUDA graphs) made each step about
# 2.5x faster than nanoGPT's compiled loop. On a 2-core CPU it would take hours; to try it anyway, lower
# `max_iters` or set `TrainConfig(time_limit_s=...)`, which stops early and still evaluates.
#
# `train` picks the precision and the number of threads for the machine it runs on
# (`attnlab.fast.policy`; `result.settings` says what it chose, in one line):
#
# * **precision**: bf16 autocast where the CPU computes bf16 natively (`avx512_bf16` or AMX in
#   `/proc/cpuinfo`), float32 on any other CPU. The loss holds: in nanoGPT's batch order, 2000 steps
#   reach validation 1.8857 in bf16 as in float32 (seed 1337; seeds 1–3 within 0.001 of float32).
#   Measured side by side with one thread, a bf16 step is 1.4x faster than a float32 one.
# * **threads**: one per CPU your process may really use: its CPU affinity, a cgroup or hub CPU limit,
#   and only the CPUs that other work leaves free, re-decided every 50 steps as the load changes. On a
#   busy 2-core machine that is one thread: there, one thread stepped 7.2x faster than two, because
#   two threads wait for each other at every step while other programs hold the cores.
#
# The default run is a fixed amount of work, about 80 CPU-seconds on a quiet core (a bf16 step takes
# 37 ms of CPU); its time is that work divided by the share of a CPU your kernel gets, which the cell
# after training prints; on a quiet machine expect 1 to 2 minutes. Measured on the course's shared
# 2-core machine with these defaults (bf16, 1 thread; `benchmarks/bench_capstone.py --main-only`,
# records in `benchmarks/RESULTS.md`), with validation 1.918 and train 1.757 at step 2000 every time:
#
# | load average during the run (median) | time | steps/s | share of a CPU |
# |---|---|---|---|
# | 5.2 | **3.0 min** | 11.3 | 50 % |
# | 8.2 | 5.0 min | 6.6 | 30 % |
# | 12.9 | 6.8 min | 4.9 | 24 % |
#
# `TrainConfig(precision="fp32", threads=2)` asks for a setting yourself.
#
# ## 8 · Common mistakes
#
# | Mistake | Symptom | Fix |
# |---|---|---|
# | targets not shifted (`y = x`) | loss falls to almost 0, samples are garbage: the model learned to copy its input | `y[:, t] = x[:, t + 1]`, as `get_batch` does |
# | judging by the training loss | looks great while the model memorises | watch the **validation** loss |
# | sampling in training mode | dropout makes samples noisier and non-reproducible | `model.eval()` (`generate` does it) |
# | prompt or context longer than `block_size` | `ValueError`: there is no learned position beyond it | crop to the last `block_size` tokens |
# | learning rate too high / no warm-up | loss spikes or becomes `nan` early | warm-up, lower peak rate, gradient clipping |
# | a character the tokenizer never saw | `ValueError` from `encode` | build the tokenizer from the training text; only use its characters |
# | comparing losses in different units | `log2` gives bits, PyTorch gives nats ($\ln$) | state the unit; bits = nats / ln 2 |
#
# ## Mastery check
#
# Three skills from this lesson: counting a GPT's parameters, the loss of a uniform model, and the
# shapes of a training batch.

# %%
from attnlab.practice import mastery_check

mastery_check("09")

# %% [markdown]
# **Next:** lesson 10, *Costs, results and limits*: what attention costs as sequences grow, what the
# original Transformer achieved, and where the architecture breaks.
