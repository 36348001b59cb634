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

gate("10")

# %% [markdown]
# # Lesson 10 · Costs, results and limits
#
# You have built every part of a Transformer and trained a small GPT. This last lesson steps back and
# asks three questions:
#
# 1. **What does attention cost?** The complexity table of the original paper, then the same claim
#    **measured on your machine**: time and memory of one attention call as the sequence grows.
# 2. **What did it buy?** The translation results that made the Transformer the default
#    architecture, and what its training cost.
# 3. **Where does it break?** Four failure modes: the quadratic bill, what a causal mask does and does
#    not promise, positions beyond the training range, and attention weights read as explanations.
#
# It ends with one picture that ties the whole course together: encoder-only, decoder-only and
# encoder-decoder models are the same attention equation with different masks, inputs and objectives.
#
# Every measurement in this lesson is small. With `ATTNLAB_CI=1` (the automated test run) the grids
# shrink further, so the fitted slopes are rougher; run the lesson normally to see the clean picture.

# %%
# %matplotlib inline
import math
import time

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from attnlab.nn import (GPT, GPTConfig, KVCache, causal_mask, padding_mask, scaled_dot_product_attention,
                        sinusoidal_encoding, split_heads)
from attnlab.training import is_ci
from attnlab.viz import attention_heatmap, mask_heatmap
from attnlab.viz_model import (attention_cost_curve, fit_loglog_slope, plot_attention_cost,
                               score_matrix_bytes)

CI = is_ci()
torch.manual_seed(0)
plt.rcParams["figure.dpi"] = 100
print("quick CI mode" if CI else "full mode", "| torch threads:", torch.get_num_threads())

# %% [markdown]
# ## 1 · The complexity table
#
# Vaswani et al. (2017, §4 and Table 1) compared three ways to let positions of a length-$n$
# sequence of width $d$ exchange information, on three counts:
#
# * **cost per layer**: arithmetic in one layer;
# * **sequential operations**: steps that must run one after another (they cannot be parallelised);
# * **maximum path length**: how many layers a signal crosses to get from any position to any other.
#
# | layer type | cost per layer | sequential operations | maximum path length |
# |---|---|---|---|
# | self-attention | $O(n^2 \cdot d)$ | $O(1)$ | $O(1)$ |
# | recurrent | $O(n \cdot d^2)$ | $O(n)$ | $O(n)$ |
# | convolution, kernel $k$ | $O(k \cdot n \cdot d^2)$ | $O(1)$ | $O(\log_k n)$ (dilated) |
#
# Where each entry comes from:
#
# * **Self-attention** scores every pair of positions: $n^2$ dot products of length $d$, so
#   $n^2 d$. All pairs are independent, so one parallel step; and any position reads any other
#   in a single layer, so the path length is 1.
# * **Recurrence** updates a $d$-wide state with a $d \times d$ matrix at each of $n$ steps ($n d^2$),
#   but step $t$ needs step $t-1$: $n$ sequential steps, and a signal from position 1 crosses
#   $n$ updates to reach position $n$.
# * **Convolution** applies a $k$-wide kernel of $d \times d$ matrices at every position
#   ($k n d^2$), all in parallel; one layer only reaches $k$ neighbours, so connecting the ends takes
#   a stack of layers: $n/k$ plain layers, or $\log_k n$ with dilations.
#
# The table hides a comparison: self-attention's $n^2 d$ is *cheaper* than recurrence's $n d^2$ as
# long as $n < d$. For sentences of a few dozen tokens and $d = 512$ that held comfortably. The
# figure puts numbers on it.

# %%
d, k = 512, 3
n = np.logspace(1, 4, 200)
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
axes[0].loglog(n, n**2 * d, label="self-attention  n²·d")
axes[0].loglog(n, n * d**2, label="recurrent  n·d²")
axes[0].loglog(n, k * n * d**2, label=f"convolution  k·n·d² (k={k})")
axes[0].axvline(d, color="grey", ls=":", lw=1)
axes[0].text(d * 1.1, 1e8, "n = d", color="grey")
axes[0].set(xlabel="sequence length n", ylabel="multiply-adds per layer (up to constants)",
            title=f"cost per layer, d = {d}")
axes[1].loglog(n, np.ones_like(n), label="self-attention  1")
axes[1].loglog(n, n, label="recurrent  n")
axes[1].loglog(n, np.log(n) / np.log(k), label=f"dilated convolution  log_k n (k={k})")
axes[1].set(xlabel="sequence length n", ylabel="layers between the farthest positions",
            title="maximum path length")
for ax in axes:
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
fig.tight_layout()
plt.show()

# %% [markdown]
# **Worked example.** Your capstone GPT has $n = 64$ characters of context and $d = 128$: the score
# computation is $64^2 \cdot 128 \approx 0.5$ M multiply-adds per layer, while a recurrent layer of the
# same width would need $64 \cdot 128^2 \approx 1.0$ M, *and* 64 sequential steps. At $n = 4096$ the
# picture flips: $4096^2 \cdot 128 \approx 2.1$ G against $67$ M. Attention's bargain is good while
# sequences are short compared with the model width, and gets expensive after that.

# %% [markdown]
# ## 2 · Measuring the $O(L^2 \cdot d)$ cost
#
# Now in the course's notation: queries and keys are `(B, H, L, d_k)`. One attention call does two
# matrix products,
#
# $$S = \frac{Q K^\top}{\sqrt{d_k}} \in \mathbb{R}^{B \times H \times L \times L}, \qquad O = \operatorname{softmax}(S)\, V,$$
#
# each costing $B \cdot H \cdot L^2 \cdot d_k$ multiply-adds, i.e. $2 B H L^2 d_k$ FLOPs (a multiply-add is
# two floating-point operations). Total: $4 B H L^2 d_k$ FLOPs. PyTorch can count them for us:

# %%
B, H, L, d_k = 2, 4, 128, 32
q = torch.randn(B, H, L, d_k)  # (B, H, L, d_k)
with FlopCounterMode(display=False) as counter:
    scaled_dot_product_attention(q, q, q)
print(f"counted FLOPs  : {counter.get_total_flops():,}")
print(f"4·B·H·L²·d_k   : {4 * B * H * L**2 * d_k:,}")

# %% [markdown]
# The explicit path of `attnlab.nn.scaled_dot_product_attention` also **stores** the scores and the
# weights: $B \cdot H \cdot L^2$ numbers each, 4 bytes apiece in float32. That memory grows with
# $L^2$ too. PyTorch's fused kernel, `torch.nn.functional.scaled_dot_product_attention`, computes the
# same output block by block and never keeps a whole $L \times L$ matrix (the FlashAttention idea), so
# its extra memory grows only like $L$. It does the same arithmetic, so its time should still grow like $L^2$.
#
# Let's measure both on this machine: the median time of one causal attention call and the bytes
# allocated during it (PyTorch's profiler, summing every allocation), for a range of $L$.
# On a log-log plot a power law $t \propto L^p$ is a straight line of slope $p$.

# %%
lengths = [32, 64, 128, 256] if CI else [64, 128, 256, 512, 1024, 2048]
t0 = time.perf_counter()
curve = attention_cost_curve(lengths, B=1, H=4, d_k=32, repeats=3 if CI else 7)
print(f"measured in {time.perf_counter() - t0:.1f} s")
print(f"{'L':>6} {'explicit ms':>12} {'fused ms':>9} {'explicit MiB':>13} {'fused MiB':>10} {'one L×L MiB':>12}")
for row in zip(*(curve[key] for key in ("L", "explicit_ms", "fused_ms", "explicit_bytes", "fused_bytes", "score_bytes"))):
    L_, e, f, eb, fb, sb = row
    print(f"{L_:>6} {e:>12.3f} {f:>9.3f} {eb / 2**20:>13.2f} {fb / 2**20:>10.2f} {sb / 2**20:>12.2f}")

# %%
fit_from = 0 if CI else 2  # small L is dominated by fixed per-call overhead, not by L²
fig = plot_attention_cost(curve, fit_from=fit_from)
fig.suptitle(f"one causal attention call, B=1, H=4, d_k=32 (slopes fitted from L = {lengths[fit_from]})", y=1.02)
plt.show()
slope_time = fit_loglog_slope(curve["L"][fit_from:], curve["explicit_ms"][fit_from:])
slope_mem = fit_loglog_slope(curve["L"][fit_from:], curve["explicit_bytes"][fit_from:])
ratio = np.median(np.array(curve["explicit_bytes"]) / np.array(curve["score_bytes"]))
print(f"explicit path: time slope {slope_time:.2f}, memory slope {slope_mem:.2f}; "
      f"it allocates about {ratio:.1f} L×L matrices per call")

# %% [markdown]
# How to read the plots (the exact numbers depend on your CPU and on what else it is doing):
#
# * **Memory** is the cleanest: the explicit path's allocations track the dashed $B H L^2 \cdot 4$ line
#   with a slope very close to 2. It allocates a few $L \times L$ tensors per call (scores, the masked
#   scores, the weights); the fused kernel allocates far less, with a slope near 1: the output plus
#   small per-block buffers.
# * **Time** bends: at small $L$ a call costs a fixed overhead (Python, argument checks, kernel
#   launch), so the curve is flat; once the $L^2$ work dominates the slope approaches 2. It can even
#   exceed 2 for the explicit path: when the $L \times L$ tensors outgrow the CPU caches (a few MiB),
#   every pass over them waits on main memory, which is one more price of materialising them. (A busy
#   machine also adds noise: rerun the cell and compare.) The fused kernel is faster and skips the
#   masked upper triangle, but its time still grows roughly quadratically: fusing saves **memory
#   traffic**, not **arithmetic**.
#
# ### Try it: predicted versus measured
#
# The slider picks a sequence length; the other controls set batch, heads and number format. The
# panel shows:
#
# * the time **predicted** by the power law fitted above (scaled linearly with $B \cdot H$), and the
#   time **measured** right now for the explicit and the fused path (when the tensors are small
#   enough to measure quickly);
# * the memory of one $B \times H \times L \times L$ score tensor in the chosen format. Try $L = 8192$,
#   $B = 8$, $H = 16$ in float32: that single tensor no longer fits in the memory of most laptops.

# %%
coef_explicit = np.polyfit(np.log(curve["L"][fit_from:]), np.log(curve["explicit_ms"][fit_from:]), 1)
coef_fused = np.polyfit(np.log(curve["L"][fit_from:]), np.log(curve["fused_ms"][fit_from:]), 1)
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024:
            return f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


def cost_panel(L=1024, B=1, H=4, dtype="float32"):
    scale = B * H / 4  # the fit was made at B=1, H=4; time grows linearly with B·H
    pred_e = scale * math.exp(np.polyval(coef_explicit, math.log(L)))
    pred_f = scale * math.exp(np.polyval(coef_fused, math.log(L)))
    score_bytes = score_matrix_bytes(L, B, H, DTYPES[dtype])
    lines = [f"L = {L}, B = {B}, H = {H}, d_k = 32",
             f"predicted time  explicit {pred_e:9.2f} ms   fused {pred_f:9.2f} ms"]
    if B * H * L * L <= 2**24:  # at most 16 M scores (64 MiB in float32): quick to measure
        m = attention_cost_curve([L], B=B, H=H, d_k=32, repeats=3, measure_memory=False)
        lines.append(f"measured time   explicit {m['explicit_ms'][0]:9.2f} ms   fused {m['fused_ms'][0]:9.2f} ms")
    else:
        lines.append("measured time   (skipped: too large to measure interactively)")
    lines.append(f"one L×L score tensor in {dtype}: {human_bytes(score_bytes)}"
                 f"  (B·H·L² = {B * H * L * L:,} numbers × {score_bytes // (B * H * L * L)} bytes)")
    print("\n".join(lines))


widgets.interact(
    cost_panel,
    L=widgets.SelectionSlider(options=[2**i for i in range(5, 15)], value=256 if CI else 1024, description="L"),
    B=widgets.IntSlider(value=1, min=1, max=32, description="B"),
    H=widgets.IntSlider(value=4, min=1, max=16, description="H"),
    dtype=widgets.Dropdown(options=list(DTYPES), value="float32", description="dtype"),
);

# %% [markdown]
# ### The other quadratic-looking bill: the KV cache
#
# During generation (lesson 08) each layer keeps the keys and values of every earlier position. That
# cache grows only **linearly** in $L$, but it is multiplied by everything else:
# $2 \cdot n_\text{layers} \cdot B \cdot L \cdot d_\text{model}$ numbers (keys and values; the heads cancel because
# $H \cdot d_k = d_\text{model}$). `attnlab`'s `KVCache` holds exactly that:

# %%
n_layers, d_model, n_heads, B, L = 4, 128, 4, 2, 64
total = 0
for _ in range(n_layers):
    cache = KVCache()
    kv = split_heads(torch.zeros(B, L, d_model), n_heads)  # (B, H, L, d_k)
    cache.update(kv, kv)
    total += cache.k.numel() * cache.k.element_size() + cache.v.numel() * cache.v.element_size()
print(f"cache bytes: {total:,}   formula 2·n_layers·B·L·d_model·4 = {2 * n_layers * B * L * d_model * 4:,}")

# %% [markdown]
# ## 3 · What it bought: the original results
#
# The architectural argument (constant path length, full parallelism) only mattered because it paid
# off on a hard benchmark. Vaswani et al. (2017, Table 2) trained on WMT 2014 English→German and
# English→French translation and reported BLEU on the newstest2014 test sets:
#
# | model | EN→DE BLEU | EN→FR BLEU | training cost (FLOPs) | training time |
# |---|---|---|---|---|
# | Transformer (base) | 27.3 | 38.1 | $3.3 \cdot 10^{18}$ | 12 h on 8 P100 GPUs (100k steps) |
# | Transformer (big) | **28.4** | **41.8** | $2.3 \cdot 10^{19}$ | 3.5 days on 8 P100 GPUs (300k steps) |
#
# Both beat the best recurrent and convolutional systems of the time (including ensembles) on
# English→German, and the big model set a single-model record on English→French, at a fraction of
# the training cost of the systems it beat.
#
# Keep the caveats in mind: BLEU measures n-gram overlap with one reference translation, not meaning;
# the comparison depends on the baselines chosen and how hard they were tuned; and sentences of a
# few dozen tokens are exactly where $n^2 d$ is cheap.
#
# **Worked example: where "FLOPs" came from.** The paper estimated training cost as
# time × number of GPUs × sustained single-precision throughput per GPU. Undo it for the base model:

# %%
base_flops, base_seconds, gpus = 3.3e18, 12 * 3600, 8
print(f"implied throughput per P100: {base_flops / (base_seconds * gpus) / 1e12:.1f} TFLOP/s")
big_flops, big_seconds = 2.3e19, 3.5 * 24 * 3600
print(f"big model: {big_flops / (big_seconds * gpus) / 1e12:.1f} TFLOP/s per GPU")

# a rough count for your capstone GPT: about 6 FLOPs per parameter per token (forward + backward)
capstone_params, capstone_tokens = 0.8e6, 2000 * 12 * 64
capstone_flops = 6 * capstone_params * capstone_tokens
print(f"capstone GPT: ≈ {capstone_flops:.1e} FLOPs, about 1/{base_flops / capstone_flops:,.0f} of Transformer-base")

# %% [markdown]
# Both lines give roughly 9–10 TFLOP/s, the P100's advertised single-precision peak: the cost column
# is an estimate from wall-clock time, not a count of operations. Your capstone run is about half a
# million times smaller than Transformer-base.
#
# ## 4 · Where it breaks: four failure modes
#
# ### 4a · The quadratic bill
#
# Section 2 measured it: doubling $L$ roughly quadruples the score memory and, once overhead is
# amortised, the time. Long-context models either pay it, or change the pattern (sparse or local
# attention, chunking, recurrence-like state, low-rank approximations), and each change gives up some
# of the direct any-to-any access that made attention attractive.
#
# ### 4b · A causal mask guarantees *no leakage*, not *coherence*
#
# The guarantee is exact and easy to test: change a *future* token and no earlier position's output
# moves. Below, an **untrained** GPT passes that test perfectly.

# %%
torch.manual_seed(0)
tiny = GPT(GPTConfig(vocab_size=27, block_size=32, d_model=32, n_heads=2, n_layers=2)).eval()
idx = torch.randint(27, (1, 20))  # (1, 20)
changed = idx.clone()
changed[0, 12:] = (changed[0, 12:] + 5) % 27  # rewrite positions 12..19
with torch.no_grad():
    a, _ = tiny(idx)  # (1, 20, 27)
    b, _ = tiny(changed)
print("positions 0..11 unchanged:", torch.equal(a[0, :12], b[0, :12]))
print("positions 12..19 changed  :", not torch.allclose(a[0, 12:], b[0, 12:]))
alphabet = "abcdefghijklmnopqrstuvwxyz "
sample = tiny.generate(torch.zeros(1, 1, dtype=torch.long), 30, generator=torch.Generator().manual_seed(0))
print("its text:", repr("".join(alphabet[i] for i in sample[0].tolist())))

# %% [markdown]
# Perfectly leak-free, and gibberish. The mask says only *which* positions may be read. Whether the
# continuation is consistent, plans ahead, or avoids contradicting itself is left to training, and
# generation adds a further gap: the model was trained on true prefixes (teacher forcing) but generates
# from its own samples, so one early mistake conditions every later step.
#
# ### 4c · Positions beyond the training range
#
# A GPT with **learned** positions has exactly `block_size` position vectors; there is no vector for
# position `block_size`. attnlab refuses rather than silently wrapping around:

# %%
try:
    tiny(torch.zeros(1, 33, dtype=torch.long))  # block_size is 32
except ValueError as err:
    print("ValueError:", err)
print("position table:", tuple(tiny.pos_emb.weight.shape), "= (block_size, d_model)")

# %% [markdown]
# **Sinusoidal** encodings (lesson 04) are defined for every position, so code never fails. But
# "defined" is not "seen in training". Each dimension pair turns at its own frequency; the slow ones
# move only a little during the first 64 positions, so a model trained on 64 positions has only seen a
# small slice of their range. Past position 64 those dimensions take values the model never saw.

# %%
train_len, d_pe = 64, 64
pe = sinusoidal_encoding(8 * train_len, d_pe)  # (512, 64)
seen_lo, seen_hi = pe[:train_len].min(0).values, pe[:train_len].max(0).values  # (64,) each
outside = ((pe[train_len:] < seen_lo - 1e-3) | (pe[train_len:] > seen_hi + 1e-3)).any(0)  # (64,)
print(f"{int(outside.sum())} of {d_pe} dimensions take values beyond position {train_len} "
      f"that never occurred in positions 0..{train_len - 1}")

fig, axes = plt.subplots(1, 2, figsize=(12, 3.6))
im = axes[0].imshow(pe.T, aspect="auto", cmap="RdBu", vmin=-1, vmax=1)
axes[0].axvline(train_len - 0.5, color="k", lw=2)
axes[0].set(xlabel="position", ylabel="dimension", title="sinusoidal encoding; training range left of the line")
fig.colorbar(im, ax=axes[0])
for dim in (0, 20, 40, 62):
    axes[1].plot(pe[:, dim], label=f"dim {dim}{' (outside)' if outside[dim] else ''}")
axes[1].axvspan(0, train_len - 1, color="grey", alpha=0.2, label="seen in training")
axes[1].set(xlabel="position", ylabel="value", title="fast dimensions repeat; slow ones leave the seen range")
axes[1].legend(fontsize=7, loc="lower left")
fig.tight_layout()
plt.show()

# %% [markdown]
# Fast dimensions (low index) cycle many times inside the training range, so longer inputs only
# repeat familiar values. Slow dimensions (high index) drift into new territory. Whether a model
# trained on short sequences then *works* on long ones is an empirical question, and often the
# answer is no. That is why relative and rotary schemes (lesson 04) exist, and even they do not
# guarantee length generalisation.
#
# ### 4d · Attention weights are not explanations
#
# A heatmap shows where a head *put its weight*. The output is $\sum_j a_j v_j$, so what a key
# *contributes* also depends on its **value vector**. Two small constructions make the point, using
# attnlab's attention with hand-picked $q, k, v$ ($d_k = 2$, three keys).
#
# **(i) Different weights, identical output.** Keys 0 and 1 carry the *same* value. Query A looks at
# key 0, query B at key 1, and the outputs are equal to the last digit.

# %%
k = torch.tensor([[4.0, 0.0], [0.0, 4.0], [0.0, 0.0]])  # (S=3, d_k=2)
v = torch.tensor([[1.0, 2.0], [1.0, 2.0], [5.0, -1.0]])  # (S=3, d_v=2): keys 0 and 1 share a value
q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])  # (L=2, d_k=2): query A, query B
out, w = scaled_dot_product_attention(q, k, v)
print("weights A:", w[0].numpy().round(3), " output A:", out[0].numpy().round(4))
print("weights B:", w[1].numpy().round(3), " output B:", out[1].numpy().round(4))
print("same output:", torch.allclose(out[0], out[1]))

# %% [markdown]
# **(ii) The biggest weight, the smallest contribution.** Now key 0's value is zero. Query A still
# gives it about 0.89 of its weight, yet the output comes almost entirely from key 2, which gets
# only about 0.05.

# %%
v2 = torch.tensor([[0.0, 0.0], [1.0, 2.0], [10.0, 10.0]])  # (S=3, d_v=2): key 0 carries nothing
out2, w2 = scaled_dot_product_attention(q[:1], k, v2)  # query A only
contribution = (w2[0][:, None] * v2).norm(dim=-1)  # ‖a_j v_j‖ per key
print("weights       :", w2[0].numpy().round(3))
print("contributions :", contribution.numpy().round(3), " output:", out2[0].numpy().round(3))

fig, axes = plt.subplots(1, 3, figsize=(12, 3))
attention_heatmap(w, ["query A", "query B"], ["key 0", "key 1", "key 2"], ax=axes[0],
                  title="(i) two weight patterns, one output")
axes[1].bar(["key 0", "key 1", "key 2"], w2[0], color="tab:blue")
axes[1].set(title="(ii) weight a_j", ylim=(0, 1))
axes[2].bar(["key 0", "key 1", "key 2"], contribution, color="tab:orange")
axes[2].set(title="(ii) contribution ‖a_j v_j‖")
fig.tight_layout()
plt.show()

# %% [markdown]
# In a real model it gets murkier: the head's output goes through $W^O$, is added to a residual stream
# that already carries most of the information, and later heads and feed-forward layers can undo or
# override it. Attention maps are a good **diagnostic** (lesson 09 used them to find word-boundary
# and local heads, and measured that its small model grew no sharp previous-token head),
# but a claim such as "the model answered X *because* it attended to Y" needs an intervention: change
# Y or the weights and see whether the output changes.
#
# ## 5 · The unifying view
#
# Every model in this course computes the same thing:
#
# $$\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V .$$
#
# What separates the families is **who may attend to whom** (the mask $M$), **where $Q$ and $K, V$
# come from** (one stream or two), and **what the model is trained to predict**:
#
# | family | attention pattern | mask | models | trained on |
# |---|---|---|---|---|
# | encoder-only (BERT) | bidirectional self-attention | padding only | contextual representations $p(x_i \mid x_{\setminus i})$ | masked-token prediction, classification |
# | decoder-only (GPT) | causal self-attention | causal (+ padding) | $\prod_t p(x_t \mid x_{<t})$ | next-token cross-entropy |
# | encoder-decoder (original Transformer, T5) | encoder: bidirectional; decoder: causal self + cross-attention | padding; causal; source padding | $\prod_t p(y_t \mid y_{<t}, x)$ | next-token cross-entropy given the source |
#
# Architecture, mask and objective have to agree: a bidirectional encoder cannot be sampled left to
# right, and a decoder trained without its causal mask learns to copy the future it will not have at
# generation time. The three masks side by side, built with attnlab (True = may attend):

# %%
lengths_demo = torch.tensor([5])  # one sequence of 5 real tokens, padded to 7
enc_mask = padding_mask(lengths_demo, 7)[:, None, :].expand(1, 7, 7)[0]  # (7, 7): any real key
dec_mask = causal_mask(7)  # (7, 7)
cross_mask = padding_mask(lengths_demo, 7)[:, None, :].expand(1, 4, 7)[0]  # (L=4 targets, S=7 sources)
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
mask_heatmap(enc_mask, ax=axes[0], title="encoder: bidirectional + padding")
mask_heatmap(dec_mask, ax=axes[1], title="decoder-only: causal")
mask_heatmap(cross_mask, ax=axes[2], title="cross-attention: L targets × S sources")
fig.tight_layout()
plt.show()

# %% [markdown]
# A compact summary of the whole course: **a Transformer is a stack of content-addressed
# communication layers (attention) and per-position computation (feed-forward), with positions
# added, residual paths and normalisation for depth, trained by maximum likelihood. The mask
# and the objective decide what kind of model it is.**
#
# ## 6 · Common mistakes
#
# | Mistake | Why it is wrong | Better |
# |---|---|---|
# | "attention is $O(n^2)$, so it is always slower than an RNN" | per layer it is $n^2 d$ vs $n d^2$; for $n < d$ attention does *less* arithmetic, and it is parallel | compare $n$ with $d$, and count sequential steps too |
# | timing one call, or timing the first call | the first call pays warm-up; single calls are noisy | discard a warm-up call, take the median of several |
# | "the fused kernel removes the quadratic cost" | it removes the $L \times L$ *memory*; the arithmetic is still $\propto L^2$ | check the slopes: memory ≈ 1, time ≈ 2 |
# | forgetting the factor 2 in the KV cache | keys **and** values are cached | $2 \cdot n_\text{layers} \cdot B \cdot L \cdot d_\text{model}$ numbers |
# | forgetting $B$ or $H$ in the score memory | every batch element and head has its own $L \times L$ matrix | $B \cdot H \cdot L^2 \cdot$ bytes |
# | "sinusoidal positions extrapolate, so long inputs are fine" | the encoding is defined, the model has never seen those values | test on long inputs before trusting them |
# | reading a heatmap as a cause | value vectors, $W^O$ and the residual stream decide the effect | intervene: change the input or the weights and watch the output |
#
# ## Mastery check
#
# Three skills from this lesson: the bytes of a KV cache, the memory of the $L \times L$ attention
# weights, and the FLOPs of an attention call. Each card has fresh numbers.

# %%
from attnlab.practice import mastery_check

mastery_check("10")

# %% [markdown]
# **That's the course.** Where to go next: efficient attention (sparse, linear, FlashAttention), relative
# and rotary positions at scale, and mechanistic interpretability, which tests the "attention is not
# explanation" warning with interventions.
