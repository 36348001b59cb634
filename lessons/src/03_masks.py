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

gate("03")

# %% [markdown]
# # Lesson 03 · Masks: who is allowed to look at whom
#
# In lesson 02 every query could attend to every key. Real models almost never allow that.
# Two rules show up everywhere:
#
# * **No peeking at the future.** A language model that predicts token $t+1$ must not read
#   token $t+1$ while it predicts it. During training the whole sentence sits in one tensor,
#   so attention *could* look ahead; something has to stop it.
# * **No attending to padding.** A batch packs sentences of different lengths into one
#   rectangle by filling the short ones with padding tokens. Those fillers are not words and
#   must not influence anyone.
#
# Both rules are enforced the same way: by a **mask** that removes some key positions from a
# query's softmax. This lesson shows how that works, how to combine masks, and the handful of
# bugs that silently break it.
#
# **You will be able to:** build causal and padding masks, combine them with the right
# broadcasting axes, predict the attention weights a mask produces, and recognise the four
# classic mask bugs from their numbers.

# %%
import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from IPython.display import display

from attnlab.nn import (
    MultiHeadAttention,
    causal_mask,
    combine_masks,
    padding_mask,
    scaled_dot_product_attention,
)
from attnlab.viz import attention_heatmap, heatmap, live_figure, mask_heatmap

torch.manual_seed(0)
torch.set_printoptions(precision=3, sci_mode=False)

# %% [markdown]
# ## 1 · The idea: add $-\infty$ before the softmax
#
# Recall attention: $A = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)$, taken row by
# row, and output $O = AV$. A mask is a matrix $M$ of the same shape $(L, S)$ as the scores:
#
# $$
# A = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right),\qquad
# M_{ij} = \begin{cases} 0 & \text{query } i \text{ may attend key } j\\ -\infty & \text{otherwise.}\end{cases}
# $$
#
# Why does this work? Softmax exponentiates: $A_{ij} = e^{s_{ij}} / \sum_{j'} e^{s_{ij'}}$, and
# $e^{-\infty} = 0$. A forbidden key therefore contributes **exactly zero** to both the numerator
# and the denominator. The allowed keys share the whole probability mass among themselves,
# so every row still sums to 1.
#
# **attnlab's convention.** Writing $-\infty$ by hand is error-prone, so attnlab (like
# `torch.nn.functional.scaled_dot_product_attention`) takes a **boolean** mask with
# **`True` = may attend**. Inside, it turns the boolean into the additive form with
# `scores.masked_fill(~mask, float("-inf"))`.

# %% [markdown]
# ## 2 · The causal mask, worked by hand
#
# Take a decoder input of four tokens `[BOS, y1, y2, y3]`. Token $i$ may look at tokens
# $j \le i$ only. As a boolean matrix that is the lower triangle:

# %%
tokens = ["BOS", "y1", "y2", "y3"]
allowed = causal_mask(4)  # (L, S) = (4, 4), True = may attend
print(allowed)

# %% [markdown]
# In context: row $i$ of the mask is what query $i$ may read. For *sat* (row 3) that is every token up to
# and including itself; the future token *down* is blocked.

# %%
from attnlab.diagrams import mask_in_context

mask_in_context()
plt.show()

# %% [markdown]
# The additive version $M$ has $0$ where the boolean is `True` and $-\infty$ above the
# diagonal. Written out for $L = 4$, it is the matrix added to the scores before the softmax:

# %%
M = torch.zeros(4, 4).masked_fill(~allowed, float("-inf"))  # (4, 4): 0 allowed, -inf forbidden
print(M)

# %% [markdown]
# **Predict before you run.** Suppose every score is equal (say all zeros: the queries have
# no preference). What does each row of $A$ look like after the causal mask?
#
# Row 0 sees one key, row 1 sees two, and so on. With equal scores each allowed key gets the
# same share, so the rows should be $[1]$, $[\tfrac12,\tfrac12]$, $[\tfrac13,\tfrac13,\tfrac13]$,
# $[\tfrac14,\dots]$.

# %%
scores = torch.zeros(4, 4)
print(torch.softmax(scores + M, dim=-1))

# %% [markdown]
# Now a case with real scores. We pick $Q$ and $K$, compute the masked softmax by hand,
# and check the result against `attnlab.nn.scaled_dot_product_attention`, which receives the
# *boolean* mask.

# %%
d_k = 2
q = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, -1.0]])  # (L, d_k) = (4, 2)
k = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0], [-1.0, 1.0]])  # (S, d_k) = (4, 2)
v = torch.arange(8.0).reshape(4, 2)  # (S, d_v) = (4, 2)

by_hand = torch.softmax(q @ k.T / d_k**0.5 + M, dim=-1)  # (4, 4)
out, weights = scaled_dot_product_attention(q, k, v, mask=allowed)
print(by_hand)
torch.testing.assert_close(weights, by_hand)  # same numbers as the library
print("row sums:", weights.sum(-1))

# %% [markdown]
# The upper triangle is exactly `0.0` (not "tiny"), and each row still sums to 1. The picture
# below puts the mask and the weights side by side; the third panel shows what the same
# queries would do **without** the mask, so you can see how much weight the future would have
# received.

# %%
_, unmasked = scaled_dot_product_attention(q, k, v)  # same queries, no mask
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
mask_heatmap(allowed, tokens, title="causal mask (True = may attend)", ax=axes[0])
attention_heatmap(weights, tokens, tokens, title="weights WITH causal mask", ax=axes[1])
attention_heatmap(unmasked, tokens, tokens, title="weights WITHOUT mask (future visible)", ax=axes[2])
fig.tight_layout()
plt.show()

# %% [markdown]
# ### The rectangular causal mask: fewer queries than keys ($S > L$)
#
# So far the queries and the keys were the same $L$ positions. When a model **generates** text it
# computes the keys and values of earlier positions once and keeps them (the *KV cache* of lesson 08).
# A step then has only the $L$ *newest* positions as queries, but all $S$ positions so far as keys,
# with $S > L$. The rule is still "no position sees its future", but the positions must be lined up:
# the queries are the **last** $L$ of the $S$ positions, so query $i$ sits at position $i + (S - L)$ and
#
# $$ \text{query } i \text{ may attend key } j \iff j \le i + (S - L). $$
#
# `causal_mask(L, S)` builds exactly that. It is the bottom $L$ rows of the square `causal_mask(S)`:
# the rows of the positions that are new. The special case you meet most: one new token ($L = 1$) may
# attend **every** cached key, so its mask row is all `True`.
#
# *Worked example:* $L = 2$ new queries (positions 3 and 4), $S = 5$ keys. Query 0 is position
# $0 + 3 = 3$ and may see keys 0..3; query 1 is position 4 and sees keys 0..4.

# %%
rect = causal_mask(2, 5)  # (L, S) = (2, 5): the last 2 of 5 positions ask
print(rect)
assert torch.equal(rect, causal_mask(5)[-2:])  # = the bottom 2 rows of the square mask
assert causal_mask(1, 5).all()  # one new token sees every cached key
top_left = torch.ones(2, 5).tril().bool()  # WRONG: the triangle anchored at the top-left corner
print("tril of a (2, 5) matrix, the common mistake:\n", top_left)

# %%
positions = [f"p{j}" for j in range(5)]
fig, axes = plt.subplots(1, 3, figsize=(12, 3.2), gridspec_kw={"width_ratios": [5, 5, 5]})
mask_heatmap(causal_mask(5), positions, positions, title="square causal_mask(5)", ax=axes[0])
axes[0].add_patch(plt.Rectangle((-0.5, 2.5), 5, 2, fill=False, edgecolor="tab:orange", lw=3))
axes[0].text(4.6, 3.5, "new\nqueries", color="tab:orange", va="center", fontsize=9)
mask_heatmap(rect, ["p3", "p4"], positions, title="causal_mask(2, 5): those rows", ax=axes[1])
mask_heatmap(top_left, ["p3", "p4"], positions, title="tril(ones(2, 5)): wrong alignment", ax=axes[2])
fig.tight_layout()
plt.show()

# %% [markdown]
# The third panel is the classic mistake: `torch.ones(L, S).tril()` anchors the triangle at the
# top-left corner, so it treats the new queries as positions 0 and 1. Position 3 would see only keys
# 0 and 1 and lose keys 2 and 3 that it is allowed to read; the model's output would silently change
# with the cache turned on. (PyTorch's `F.scaled_dot_product_attention(..., is_causal=True)` has the
# same top-left alignment when $L \ne S$, which is why KV-cache code passes an explicit mask.)
# `causal_mask(L, S)` refuses $S < L$: then some query would have no key at all.

# %% [markdown]
# ## 3 · Why $-\infty$ and not $-10^9$?
#
# Many tutorials write `scores.masked_fill(mask == 0, -1e9)`. In float32 that usually gives the
# same weights, because $e^{-10^9}$ underflows to 0 anyway. The difference shows up exactly when
# something is wrong: **a row in which every key is forbidden.**
#
# * With $-10^9$, every entry of that row is $-10^9$, the softmax sees equal scores and returns
#   a uniform distribution. The query quietly averages tokens it was forbidden to see. No error.
# * With $-\infty$, the row is $\mathrm{softmax}(-\infty,\dots,-\infty) = 0/0 = $ `nan`. Loud.
#
# There is also a dtype problem: $-10^9$ does not fit in float16, whose range ends at
# $\pm 65504$. Filling a half-precision score tensor with it is an error, and the usual "fix"
# is a different magic constant for every dtype. $-\infty$ exists in every floating-point type.

# %%
row = torch.tensor([2.0, -1.0, 0.5, 3.0])
nothing_allowed = torch.zeros(4, dtype=torch.bool)  # a row with no allowed key
print("with -1e9:", torch.softmax(row.masked_fill(~nothing_allowed, -1e9), dim=-1))
print("with -inf:", torch.softmax(row.masked_fill(~nothing_allowed, float("-inf")), dim=-1))
half_scores = row.half()  # the same scores in float16, as in mixed-precision training
try:
    half_scores.masked_fill(~nothing_allowed, -1e9)
except RuntimeError as err:
    print("float16 with -1e9: RuntimeError:", err)
print("float16 with -inf:", half_scores.masked_fill(~nothing_allowed, float("-inf")))

# %% [markdown]
# `nan` is at least visible, but it surfaces much later (a `nan` loss three layers up). So
# attnlab goes one step further and **checks for fully masked rows before the softmax**,
# raising a `ValueError` that names the rows. We will trigger it on purpose in section 8.

# %% [markdown]
# ## 4 · The padding mask
#
# Three sentences of lengths 4, 2 and 3, padded to $S = 4$:
#
# | | pos 0 | pos 1 | pos 2 | pos 3 |
# |---|---|---|---|---|
# | sentence 0 | the | cat | sat | down |
# | sentence 1 | hello | there | `<pad>` | `<pad>` |
# | sentence 2 | it | is | late | `<pad>` |
#
# `padding_mask(lengths, S)` returns a $(B, S)$ boolean: `True` for a real token.

# %%
lengths = torch.tensor([4, 2, 3])
pad = padding_mask(lengths, S=4)  # (B, S) = (3, 4)
print(pad)

# %% [markdown]
# The padding mask is about **keys** (columns): nobody may attend *to* a pad. To apply it to
# self-attention scores of shape $(B, L, S)$ you add the query axis yourself:
# `pad[:, None, :]` has shape $(B, 1, S)$ and broadcasts over all $L$ query rows. For the
# $(B, H, L, S)$ scores of multi-head attention it is `pad[:, None, None, :]`.
#
# attnlab never guesses where the missing axes go: a $(B, S)$ mask could be broadcast the
# wrong way when $B = L$, and nobody would notice. Explicit axes make the intent readable.

# %%
print("key-padding mask for (B, L, S) scores:", tuple(pad[:, None, :].shape))
print("key-padding mask for (B, H, L, S) scores:", tuple(pad[:, None, None, :].shape))

# %% [markdown]
# What about the padded **queries** (rows 2 and 3 of sentence 1)? They still attend to the
# real tokens and produce some output, which is meaningless but harmless: the loss ignores
# those positions later. Do **not** mask the padded rows entirely; that would create rows with
# no allowed key (section 8).
#
# ## 5 · Combining causal and padding masks
#
# A decoder on a padded batch needs both rules: key $j$ is allowed for query $i$ only if
# $j \le i$ **and** $j$ is a real token. For booleans that is a logical AND, which
# `combine_masks` computes with broadcasting ($(L, S)$ AND $(B, 1, S)$ gives $(B, L, S)$).
# (In the additive picture the same thing is a sum of the two $M$ matrices: $0 + 0 = 0$,
# anything $+(-\infty) = -\infty$.)

# %%
both = combine_masks(causal_mask(4), pad[:, None, :])  # (4, 4) & (B, 1, 4) -> (B, 4, 4)
print(tuple(both.shape))

fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
sentences = [["the", "cat", "sat", "down"], ["hello", "there", "<pad>", "<pad>"], ["it", "is", "late", "<pad>"]]
for b, ax in enumerate(axes):
    mask_heatmap(both[b], sentences[b], title=f"sentence {b}: causal AND padding", ax=ax)
fig.tight_layout()
plt.show()

# %% [markdown]
# Every row keeps at least key 0 (each sentence has at least one real token), so no row is
# empty. The padded columns are blank in every row.
#
# ## 6 · Cross-attention: mask the *source* keys
#
# In an encoder–decoder model the decoder's queries (target, length $L$) attend to the
# encoder's outputs (source, length $S$). Now the keys come from the source, so the mask
# that matters is the **source** padding mask, shape $(B, S)$, applied on the key axis. There
# is no causal mask here: the whole source sentence is known.
#
# With `MultiHeadAttention` you hand the $(B, S)$ mask over as `key_padding_mask` and the
# module adds the axes. The returned weights have shape $(B, H, L, S)$.

# %%
B, L, S, d_model, n_heads = 2, 3, 5, 8, 2
source_lengths = torch.tensor([5, 3])
decoder_states = torch.randn(B, L, d_model)  # queries come from the target side
encoder_out = torch.randn(B, S, d_model)  # keys/values come from the source side

cross = MultiHeadAttention(d_model, n_heads)
src_pad = padding_mask(source_lengths, S)  # (B, S)
with torch.no_grad():
    out, w = cross(decoder_states, encoder_out, encoder_out, key_padding_mask=src_pad, need_weights=True)
print("output", tuple(out.shape), "| weights", tuple(w.shape))
print("sentence 1, head 0 (source length 3):\n", w[1, 0])

# %% [markdown]
# Columns 3 and 4 are zero for sentence 1: no decoder position reads the source padding.
#
# ## 7 · Explore: toggle the masks
#
# Below, six tokens have fixed random scores. Switch the causal mask on and off and slide the
# number of real (non-pad) tokens. The left panel is the mask, the right panel the attention
# weights it produces. Things to notice:
#
# * masked entries are exactly 0 and the remaining entries of the row grow to fill the gap
#   (each row always sums to 1);
# * with both masks on, the first row is always a single 1.0 on key 0;
# * rows of padded queries still attend to real keys.

# %%
L6 = 6
gen = torch.Generator().manual_seed(3)
q6, k6, v6 = (torch.randn(1, L6, 4, generator=gen) for _ in range(3))  # (1, 6, 4) each

causal_toggle = widgets.ToggleButton(value=True, description="causal mask", icon="check")
length_slider = widgets.IntSlider(value=4, min=1, max=L6, description="real tokens")


def draw_masks():
    pad6 = padding_mask([length_slider.value], L6)[:, None, :]  # (1, 1, S)
    mask6 = combine_masks(causal_mask(L6) if causal_toggle.value else None, pad6)  # (1, L, S)
    _, w6 = scaled_dot_product_attention(q6, k6, v6, mask=mask6)  # (1, L, S)
    labels = [f"t{i}" if i < length_slider.value else "pad" for i in range(L6)]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    mask_heatmap(mask6[0], labels, title="mask (True = may attend)", ax=axes[0])
    attention_heatmap(w6[0], labels, labels, title="attention weights", ax=axes[1])
    return fig


live_figure(draw_masks, [causal_toggle, length_slider])  # redrawn whenever a control changes

# %% [markdown]
# ## 8 · Four ways to get masks wrong (and what the numbers look like)
#
# ### Mistake 1: masking **after** the softmax
#
# It is tempting to compute the weights first and then zero the forbidden ones:
# `softmax(scores) * mask`. Two things go wrong.
#
# 1. The rows no longer sum to 1, so outputs shrink by a different amount in every row.
# 2. Worse, **the future leaks in through the denominator.** The softmax was normalised over
#    *all* keys, so a future key's score still changes every past weight. Below we change
#    only the last key and watch the output of query 0, which should not care.

# %%
gen4 = torch.Generator().manual_seed(0)
q4, k4, v4 = (torch.randn(4, 2, generator=gen4) for _ in range(3))  # (4, 2) each


def mask_after_softmax(q, k, v, mask):
    w = torch.softmax(q @ k.T / q.shape[-1] ** 0.5, dim=-1) * mask  # WRONG order
    return w @ v, w


_, w_wrong = mask_after_softmax(q4, k4, v4, allowed)
print("row sums after masking late:", w_wrong.sum(-1))

k4_changed = k4.clone()
k4_changed[3] = 2.0 * q4[0]  # only the LAST key changes (now it matches query 0 well)
for name, fn in [("mask after softmax", mask_after_softmax), ("attnlab (mask before)", scaled_dot_product_attention)]:
    before, w_before = fn(q4, k4, v4, allowed)
    after, w_after = fn(q4, k4_changed, v4, allowed)
    print(f"{name:22s}: query 0's weight on key 0: {w_before[0, 0]:.3f} -> {w_after[0, 0]:.3f};"
          f"  its output: {before[0].numpy().round(3)} -> {after[0].numpy().round(3)}")

# %% [markdown]
# Query 0 may only see key 0, yet with the late mask its weight and its output move when key
# 3 changes: information from the future has leaked in. With the mask applied before the
# softmax, query 0 keeps weight 1.0 on key 0 whatever the future holds.
#
# "Then renormalise the rows afterwards!" Dividing by the row sums does give the right
# formula on paper. Numerically it is still fragile, because the future scores still set
# the scale: if a forbidden key has a much larger score, all the allowed weights underflow to
# 0 before you ever mask them, and the renormalisation becomes $0/0$.

# %%
big_future = torch.tensor([[0.0, 120.0]])  # query 0: key 0 allowed, key 1 (future) huge
ok = torch.tensor([[True, False]])
late = torch.softmax(big_future, dim=-1) * ok
print("mask late + renormalise:", late / late.sum(-1, keepdim=True))
print("mask before softmax    :", torch.softmax(big_future.masked_fill(~ok, float("-inf")), dim=-1))

# %% [markdown]
# ### Mistake 2: inverted polarity
#
# Half of the code you will read uses the opposite convention (True = *blocked*). If you pass
# such a mask to attnlab, every query sees exactly the keys it should not. For the causal mask
# the inverted version `~causal_mask(4)` lets query 0 read the future and leaves the last row
# with no key at all, so attnlab stops with an error.

# %%
inverted = ~causal_mask(4)  # True above the diagonal: "blocked" convention, wrong here
print(inverted)
try:
    scaled_dot_product_attention(q4, k4, v4, mask=inverted)
except ValueError as err:
    print("ValueError:", err)

# %% [markdown]
# The inverted padding mask is sneakier. For a sentence that contains padding, no row is
# empty, so nothing fails: the sentence simply attends **only to its padding**. (Only a
# sentence with no padding at all, like sentence 0, would trigger the error.)

# %%
pad_12 = pad[1:]  # sentences 1 and 2, which both contain padding; (2, S)
qs, ks, vs = torch.randn(2, 4, 2), torch.randn(2, 4, 2), torch.randn(2, 4, 2)
_, w_inv = scaled_dot_product_attention(qs, ks, vs, mask=~pad_12[:, None, :])  # WRONG polarity
print("sentence 1 with inverted padding mask (keys 2, 3 are pads):\n", w_inv[0])

# %% [markdown]
# ### Mistake 3: a fully masked row
#
# If some query has no allowed key, its softmax is undefined. This happens with an empty
# sequence (length 0), with an inverted mask, or when someone masks padded *query* rows as
# well as keys. Different tools react differently, and only one of them tells you:

# %%
q3, k3, v3 = torch.randn(1, 3, 4), torch.randn(1, 3, 4), torch.randn(1, 3, 4)
row1_empty = torch.tensor([[True, True, False], [False, False, False], [True, True, True]])  # (3, 3)

try:
    scaled_dot_product_attention(q3, k3, v3, mask=row1_empty)
except ValueError as err:
    print("attnlab raises ValueError:\n ", err)

manual = torch.softmax((q3 @ k3.transpose(-2, -1)).masked_fill(~row1_empty, float("-inf")), dim=-1)
print("manual masked softmax, row 1:", manual[0, 1])
print("F.scaled_dot_product_attention, row 1:", F.scaled_dot_product_attention(q3, k3, v3, attn_mask=row1_empty)[0, 1])

# %% [markdown]
# A hand-written softmax gives `nan`. PyTorch's fused `F.scaled_dot_product_attention`
# (in recent versions) returns a row of zeros, which looks like a valid output and is the
# hardest to notice. attnlab refuses and tells you which row is empty.
#
# ### Mistake 4: libraries disagree on what `True` means
#
# | API | `True` in a boolean mask means |
# |---|---|
# | `torch.nn.functional.scaled_dot_product_attention(attn_mask=...)` | may attend (takes part) |
# | `torch.nn.MultiheadAttention(attn_mask=..., key_padding_mask=...)`, `torch.nn.Transformer` | **not** allowed |
# | attnlab | may attend (like SDPA) |
#
# Let's run both PyTorch APIs on the same problem. To make the comparison exact, we copy the
# weights of an attnlab `MultiHeadAttention` into `torch.nn.MultiheadAttention` (which keeps
# the three input projections stacked in one `in_proj_weight`).

# %%
d_model, n_heads, L = 8, 2, 4
ours = MultiHeadAttention(d_model, n_heads)
theirs = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True)
with torch.no_grad():
    theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
    theirs.out_proj.weight.copy_(ours.w_o.weight)
    theirs.out_proj.bias.copy_(ours.w_o.bias)

x = torch.randn(1, L, d_model)
causal = causal_mask(L)  # attnlab convention: True = may attend
with torch.no_grad():
    y_ours, _ = ours(x, attn_mask=causal)
    y_converted, _ = theirs(x, x, x, attn_mask=~causal)  # converted at the boundary with ~
    y_raw, _ = theirs(x, x, x, attn_mask=causal)  # NOT converted: True now means "blocked"

torch.testing.assert_close(y_ours, y_converted)
print("with ~mask   : outputs match attnlab")
print("without ~    : row 0 differs from attnlab by", (y_ours - y_raw)[0, 0].abs().max().item())
print("               last row:", y_raw[0, -1])

# %% [markdown]
# Without the `~`, `nn.MultiheadAttention` blocks the diagonal and the past, lets the
# early queries read the future, and gives `nan` in the last row (it has no allowed key). The
# fused SDPA function, on the other hand, takes attnlab's mask as it is:

# %%
qh, kh, vh = torch.randn(1, 2, L, 4), torch.randn(1, 2, L, 4), torch.randn(1, 2, L, 4)  # (B, H, L, d_k)
torch.testing.assert_close(
    F.scaled_dot_product_attention(qh, kh, vh, attn_mask=causal),  # SDPA: True = take part
    scaled_dot_product_attention(qh, kh, vh, mask=causal)[0],
)
print("F.scaled_dot_product_attention agrees with attnlab on the unconverted mask")

# %% [markdown]
# The rule for your own code: keep **one** convention (True = may attend) and convert with
# `~mask` exactly at the line where you call an API that uses the other one. Write a comment
# there; the next reader will thank you.
#
# ## Common mistakes, in one list
#
# * **Masking after the softmax.** Rows stop summing to 1 and future scores leak through the
#   normalisation. Mask the *logits*.
# * **Using $-10^9$ instead of $-\infty$.** Hides fully masked rows (uniform weights instead of an
#   error) and is not representable in float16.
# * **Inverted polarity.** `tril` vs `triu`, `mask == 0` vs `mask == 1`, PyTorch's two APIs:
#   check one row of your mask by eye (query 0 of a causal mask allows only key 0).
# * **Padding on the wrong axis.** Padding masks the *keys* (last axis). `pad[:, None, :]`,
#   not `pad[:, :, None]`.
# * **A query with no allowed key.** Empty sequences, masked padded queries, inverted masks.
# * **Cross-attention with the target mask.** Decoder→encoder attention needs the *source*
#   padding mask and no causal mask.
#
# ## Practice
#
# On paper first:
#
# 1. For `causal_mask(3, 5)` (3 new queries, 5 keys, as with a KV cache), which keys may the
#    first query see?
# 2. Lengths `[2, 5]`, $S = 5$, equal scores, no causal mask: what weight does each key get in
#    sentence 0?
# 3. Which mask do you pass for padding on $(B, H, L, S)$ scores, given `pad` of shape $(B, S)$?
# 4. A decoder's first query row comes out as `[0.5, 0.5, 0, 0]` with a causal mask. Which bug do
#    you suspect?
#
# <details><summary><b>Answers</b> (click to open)</summary>
#
# 1. Keys 0, 1, 2. The 3 queries are the *last* 3 of 5 positions, so the first of them is
#    position 2 and sees $j \le 2$.
# 2. $\tfrac12$ for each of the two real keys, $0$ for the three pads.
# 3. `pad[:, None, None, :]`, shape $(B, 1, 1, S)$.
# 4. Query 0 may see only key 0, so its row must be `[1, 0, 0, 0]`. Weight on keys 0 and 1 (and
#    nothing after) means the mask is shifted by one, e.g. `tril(diagonal=1)`. An inverted mask (a
#    "blocked" mask used as "allowed") cannot give this row: it would give query 0 every key *but*
#    key 0, e.g. `[0, ⅓, ⅓, ⅓]` with equal scores.
#
# </details>
#
# Check questions 1 and 2 with the library:

# %%
print(causal_mask(3, 5))  # row 0 is position 2 of 5: keys 0, 1, 2
q_eq = torch.zeros(2, 5, 4)  # equal scores everywhere (all dot products are 0)
_, w_eq = scaled_dot_product_attention(q_eq, q_eq, torch.randn(2, 5, 4), mask=padding_mask([2, 5], 5)[:, None, :])
print("sentence 0, query 0:", w_eq[0, 0])

# %% [markdown]
# Now a generated problem, different for every learner:

# %%
from attnlab.practice import practice

practice("masked_softmax")

# %% [markdown]
# ## Mastery check
#
# These cards are what lesson 04's gate looks at: it lists the skills you have not mastered yet and
# offers practice, but never stops you. Later lessons combine masks with heads and caches, so it
# pays to read masks quickly and correctly now.

# %%
from attnlab.practice import mastery_check

mastery_check("03")

# %% [markdown]
# **Next:** the exercise `exercises/03_masks/`, where you build these masks yourself, then
# lesson 04: attention cannot tell "dog bites man" from "man bites dog", and what to do about it.
