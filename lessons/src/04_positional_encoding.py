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

gate("04")

# %% [markdown]
# # Lesson 04 · Order and position
#
# "dog bites man" and "man bites dog" contain the same three words. Only the order tells you
# who is in trouble. A recurrent network reads left to right, so order is built in. A
# convolution looks at neighbours, so *nearness* is built in. Attention does neither: every
# query compares itself with every key by a dot product, and nothing in that computation says
# which key came first.
#
# This lesson makes that precise (self-attention is **permutation-equivariant**), checks it
# numerically, and then shows the standard fixes: **sinusoidal** encodings, **learned**
# position embeddings, and, as a look ahead, **rotary** embeddings that put *relative*
# position straight into the attention scores.
#
# **You will be able to:** state and verify permutation equivariance; explain what a causal
# mask does and does not tell a model about position; compute and read sinusoidal encodings,
# including their relative-shift property; and choose between sinusoidal and learned
# positions knowing how each behaves on longer inputs.

# %%
import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
from IPython.display import display

from attnlab.nn import (
    LearnedPositionalEmbedding,
    MultiHeadAttention,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    causal_mask,
    count_parameters,
    relative_shift_matrix,
    sinusoidal_encoding,
)
from attnlab.viz import attention_heatmap, heatmap, live_figure

torch.manual_seed(0)
torch.set_printoptions(precision=3, sci_mode=False)

# %% [markdown]
# ## 1 · Attention does not know the order
#
# Let $X \in \mathbb{R}^{L \times d_\text{model}}$ hold one token per row and let $P$ be a
# permutation matrix (it reorders rows: $PX$ is the shuffled sentence). Self-attention computes
# $Q = XW_Q$, $K = XW_K$, $V = XW_V$. Shuffle the input and follow it through:
#
# * $Q' = PXW_Q = PQ$, and likewise $K' = PK$, $V' = PV$: the rows are shuffled the same way.
# * Scores: $Q'K'^\top = PQK^\top P^\top$, the same score matrix with rows **and** columns
#   reordered.
# * Softmax works row by row, and reordering the entries of a row just reorders its softmax:
#   $A' = PAP^\top$.
# * Output: $A'V' = PAP^\top PV = PAV$, because $P^\top P = I$.
#
# $$\mathrm{Attn}(PX) = P\,\mathrm{Attn}(X).$$
#
# Shuffling the input shuffles the output **in the same way, and changes nothing else**. Each
# token's output depends on *which* tokens are present, never on *where* they are. Multi-head
# attention inherits this (every head does it; concatenation and $W_O$ act on each row
# separately), and so does the feed-forward layer, which is applied to each row alone.
#
# Let's check it with a real `MultiHeadAttention` and a toy vocabulary.

# %%
vocab = {"dog": 0, "bites": 1, "man": 2}
d_model, n_heads = 16, 4
embed = torch.nn.Embedding(len(vocab), d_model)
mha = MultiHeadAttention(d_model, n_heads)


def encode(sentence):
    ids = torch.tensor([[vocab[w] for w in sentence.split()]])  # (1, L)
    return embed(ids).detach()  # (1, L, d_model)


x_a = encode("dog bites man")
x_b = encode("man bites dog")  # the same rows, order [2, 1, 0]
perm = [2, 1, 0]

with torch.no_grad():
    out_a, _ = mha(x_a)  # (1, 3, d_model)
    out_b, _ = mha(x_b)

torch.testing.assert_close(out_b, out_a[:, perm])  # Attn(PX) == P Attn(X)
print("Attn(PX) equals P·Attn(X): the outputs are the same rows, reordered")
print(f"output for 'dog' as subject vs as object, max difference: {(out_a[0, 0] - out_b[0, 2]).abs().max():.1e}"
      " (float rounding)")

# %% [markdown]
# The vector computed for "dog" is **identical** whether the dog bites or is bitten. Any
# summary that ignores order (like averaging over tokens for classification) would give both
# sentences the same answer.
#
# One sentence is not a proof, so here is a random check on a longer input, with a random
# permutation:

# %%
x = torch.randn(2, 7, d_model)
p = torch.randperm(7)
with torch.no_grad():
    torch.testing.assert_close(mha(x[:, p])[0], mha(x)[0][:, p])
print("equivariance holds for permutation", p.tolist())

# %% [markdown]
# ### Equivariant, not invariant
#
# Two words that are easy to mix up, and texts on transformers often do:
#
# * $f$ is permutation-**invariant** if shuffling the input changes **nothing**: $f(PX) = f(X)$. A sum or a mean over
#   the tokens is invariant.
# * $f$ is permutation-**equivariant** if shuffling the input shuffles the output **the same way**: $f(PX) = P f(X)$.
#
# Self-attention is *equivariant*: its output has one row per token, and the rows travel with their tokens. It is not
# invariant: the output for "man bites dog" is a different matrix from the output for "dog bites man" (its rows are in
# another order). It becomes invariant only when something that ignores order comes after it, such as mean pooling of
# all tokens into one sentence vector, and **that** is where the two sentences become indistinguishable.

# %%
with torch.no_grad():
    invariant = torch.allclose(out_b, out_a, atol=1e-6)  # f(PX) == f(X)?
    equivariant = torch.allclose(out_b, out_a[:, perm], atol=1e-6)  # f(PX) == P f(X)?
    pooled_same = torch.allclose(out_b.mean(dim=1), out_a.mean(dim=1), atol=1e-6)  # mean over tokens
print(f"self-attention invariant: {invariant}, equivariant: {equivariant}; after mean pooling, "
      f"'dog bites man' and 'man bites dog' give the same vector: {pooled_same}")
assert equivariant and not invariant and pooled_same

# %% [markdown]
# ## 2 · Does the causal mask fix it? Partly.
#
# A decoder's causal mask *does* treat positions differently: position 0 sees one token,
# position 5 sees six. So the equivariance above is broken. But look at what a single causal
# layer still cannot see. The output at position $i$ is a weighted average over the **set**
# $\{x_0, \dots, x_i\}$, with $x_i$ as the query. Shuffle the tokens *before* $i$ among
# themselves and that set does not change, so neither does the output at $i$.

# %%
x = torch.randn(1, 6, d_model)
shuffle_prefix = [2, 0, 3, 1, 4, 5]  # reorder tokens 0..3, keep 4 and 5 in place
with torch.no_grad():
    y, _ = mha(x, attn_mask=causal_mask(6))
    y_shuf, _ = mha(x[:, shuffle_prefix], attn_mask=causal_mask(6))

print("no longer equivariant:", not torch.allclose(y_shuf, y[:, shuffle_prefix]))
print("positions 4, 5 unchanged by reordering tokens 0..3:", torch.allclose(y_shuf[:, 4:], y[:, 4:], atol=1e-6))

# %% [markdown]
# So the causal mask gives a model *some* information: how many tokens are visible, and
# which one is "me" (the query). Stacking layers can turn that into a rough sense of position,
# and decoder-only language models trained without any positional encoding still pick up
# some positional information (Haviv et al., 2022). But within
# one layer, the order of the earlier tokens is invisible, and an encoder (no causal mask)
# gets no positional information at all. The reliable fix is to put position into the input.
#
# ## 3 · Sinusoidal positional encoding
#
# The original Transformer adds a fixed vector $\mathrm{PE}(p) \in \mathbb{R}^{d_\text{model}}$
# to the embedding of the token at position $p$. Its coordinates come in (sine, cosine) pairs,
# one pair per frequency:
#
# $$
# \mathrm{PE}(p, 2i) = \sin(\omega_i\, p), \qquad \mathrm{PE}(p, 2i+1) = \cos(\omega_i\, p), \qquad
# \omega_i = \frac{1}{10000^{2i/d_\text{model}}}, \quad i = 0, \dots, \tfrac{d_\text{model}}{2}-1.
# $$
#
# Pair 0 has $\omega_0 = 1$, a wavelength of $2\pi \approx 6.3$ positions: it changes quickly,
# like the seconds hand of a clock. The last pair has a wavelength of almost $2\pi\cdot 10000$
# positions: the hour hand (for $d_\text{model} = 64$ the last pair's wavelength is about 47,000). Together they give every position a distinct pattern, at both fine
# and coarse resolution.
#
# The formula is short enough to write out; we then check it against attnlab's version.

# %%
L, d = 50, 16
pos = torch.arange(L, dtype=torch.float32)[:, None]  # (L, 1)
omega = 1.0 / 10000 ** (torch.arange(0, d, 2) / d)  # (d/2,)
mine = torch.zeros(L, d)
mine[:, 0::2] = torch.sin(pos * omega)  # even columns: sines
mine[:, 1::2] = torch.cos(pos * omega)  # odd columns: cosines

torch.testing.assert_close(mine, sinusoidal_encoding(L, d))
print("matches attnlab.nn.sinusoidal_encoding")
print("wavelengths 2π/ω_i:", [round(x, 1) for x in (2 * torch.pi / omega).tolist()])

# %% [markdown]
# Here is the whole table for 100 positions and $d_\text{model} = 64$. Each row is the vector
# added at one position. The left columns flicker quickly down the page, the right columns
# barely change: the rightmost dimensions are almost constant (sine ≈ 0, cosine ≈ 1) over
# short sequences.

# %%
pe = sinusoidal_encoding(100, 64)  # (L, d_model)
fig, ax = plt.subplots(figsize=(9, 5))
im = ax.imshow(pe, aspect="auto", cmap="RdBu", vmin=-1, vmax=1)
ax.set_xlabel("dimension (even = sin, odd = cos)")
ax.set_ylabel("position p")
ax.set_title("Sinusoidal positional encoding, d_model = 64")
fig.colorbar(im, ax=ax, label="PE(p, dim)")
plt.show()

# %% [markdown]
# ## 4 · Explore: one frequency at a time
#
# Pick a position $p$ and a dimension pair $i$. The top plot shows the sine and cosine of that
# pair over all positions, with the value used at $p$ marked. The bottom plot is the whole
# vector $\mathrm{PE}(p)$, with the chosen pair highlighted. Try: pair 0 at $p = 0, 1, 2, \dots$
# (fast turning), then a high pair (slow). Notice that $\mathrm{PE}(0)$ is $(0, 1, 0, 1, \dots)$
# for every $d_\text{model}$.

# %%
L_demo, d_demo = 100, 32
pe_demo = sinusoidal_encoding(L_demo, d_demo)  # (100, 32)
omega_demo = 1.0 / 10000 ** (torch.arange(0, d_demo, 2) / d_demo)  # (16,)

p_slider = widgets.IntSlider(value=10, min=0, max=L_demo - 1, description="position p")
i_slider = widgets.IntSlider(value=2, min=0, max=d_demo // 2 - 1, description="pair i")


def draw_pe():
    p, i = p_slider.value, i_slider.value
    t = torch.linspace(0, L_demo - 1, 800)
    w = omega_demo[i].item()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 5.5))
    top.plot(t, torch.sin(w * t), label=f"sin(ω·p) → dim {2 * i}")
    top.plot(t, torch.cos(w * t), label=f"cos(ω·p) → dim {2 * i + 1}")
    top.axvline(p, color="grey", ls=":")
    top.plot([p, p], pe_demo[p, 2 * i : 2 * i + 2], "ko")
    top.set_title(f"pair i = {i}: ω = {w:.4f}, wavelength 2π/ω = {2 * torch.pi / w:.1f} positions")
    top.set_xlabel("position")
    top.legend(loc="upper right", fontsize=8)
    colours = ["tab:orange" if j // 2 == i else "tab:blue" for j in range(d_demo)]
    bottom.bar(range(d_demo), pe_demo[p], color=colours)
    bottom.set_ylim(-1.1, 1.1)
    bottom.set_xlabel("dimension")
    bottom.set_title(f"the vector PE({p}) (orange: pair {i})")
    return fig


live_figure(draw_pe, [p_slider, i_slider])  # redrawn whenever a slider moves

# %% [markdown]
# ## 5 · The relative-shift property
#
# Why sines *and* cosines? Because of the angle-addition formulas. For one pair, with
# $a = \omega_i p$ and $b = \omega_i k$:
#
# $$
# \begin{pmatrix}\sin(a+b)\\ \cos(a+b)\end{pmatrix}
# = \begin{pmatrix}\cos b & \sin b\\ -\sin b & \cos b\end{pmatrix}
#   \begin{pmatrix}\sin a\\ \cos a\end{pmatrix}.
# $$
#
# Stack one such $2\times 2$ rotation per pair into a block-diagonal matrix $R_k$ and you get
#
# $$\mathrm{PE}(p + k) = R_k\, \mathrm{PE}(p) \quad\text{for every } p.$$
#
# The matrix depends only on the **offset** $k$, not on $p$. "Three positions later" is the
# same linear map everywhere in the sequence, which is something a linear layer (like $W_Q$ or
# $W_K$) can learn to use. We build $R_k$ ourselves, compare it with attnlab's
# `relative_shift_matrix`, and check the property on every position at once.

# %%
k = 3
blocks = [torch.tensor([[torch.cos(w * k), torch.sin(w * k)], [-torch.sin(w * k), torch.cos(w * k)]]) for w in omega]
R_k = torch.block_diag(*blocks)  # (d, d), one 2x2 rotation per frequency
torch.testing.assert_close(R_k, relative_shift_matrix(k, d))

pe50 = sinusoidal_encoding(L, d)  # (50, 16)
shifted = pe50[:-k] @ R_k.T  # row p becomes R_k PE(p)
torch.testing.assert_close(shifted, pe50[k:], atol=1e-4, rtol=0)
print(f"PE(p + {k}) == R_{k} PE(p) for all p = 0..{L - k - 1}")

# %% [markdown]
# A consequence you can see: the dot product of two encodings depends only on their distance,
# $\mathrm{PE}(p)\cdot\mathrm{PE}(q) = \sum_i \cos\big(\omega_i (p-q)\big)$. The left plot is
# the matrix of all dot products (constant along every diagonal); the right plot takes three
# rows of it. The curves are copies of one another, shifted, and peak at distance 0.
#
# Note the symmetry: distance $+3$ and $-3$ give the same dot product, so the raw encodings
# tell "how far" but not "which side". The learned $W_Q$, $W_K$ can break that symmetry.

# %%
pe_sim = sinusoidal_encoding(100, 64)  # (100, 64)
sim = pe_sim @ pe_sim.T  # (100, 100) dot products between positions
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
im = left.imshow(sim, cmap="viridis")
left.set_title("PE(p) · PE(q)")
left.set_xlabel("position q")
left.set_ylabel("position p")
fig.colorbar(im, ax=left)
for p0 in (20, 50, 80):
    right.plot(range(100), sim[p0], label=f"p = {p0}")
    right.axvline(p0, color="grey", ls=":", lw=0.8)
right.set_xlabel("position q")
right.set_ylabel("PE(p) · PE(q)")
right.set_title("peak at q = p; the same curve, shifted, for every p")
right.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 6 · Adding the encoding breaks the symmetry
#
# The encoding is **added** to the token embedding, $x_p = e_{\text{token}(p)} + \mathrm{PE}(p)$,
# not concatenated: content and position share the same $d_\text{model}$ coordinates and the
# projections $W_Q, W_K, W_V$ learn which directions to read. Now the two sentences give
# different vectors for "dog":

# %%
add_pe = SinusoidalPositionalEncoding(d_model, max_len=64)
with torch.no_grad():
    pos_a, _ = mha(add_pe(x_a))
    pos_b, _ = mha(add_pe(x_b))
print("output for 'dog' as subject vs object, with positions:", (pos_a[0, 0] - pos_b[0, 2]).abs().max().item())

words_a = "dog bites man".split()
diff_no_pe = (out_b[0][perm] - out_a[0]).abs()  # "man bites dog" re-sorted to dog, bites, man
diff_pe = (pos_b[0][perm] - pos_a[0]).abs()
top = diff_pe.max().item()
fig, axes = plt.subplots(1, 2, figsize=(12, 2.6))
heatmap(diff_no_pe, words_a, title="no positions: |output difference| per word", ax=axes[0], annotate=False, cmap="Reds", vmin=0, vmax=top)
heatmap(diff_pe, words_a, title="with sinusoidal PE: |output difference| per word", ax=axes[1], annotate=False, cmap="Reds", vmin=0, vmax=top)
for ax in axes:
    ax.set_xlabel("output feature")
fig.tight_layout()
plt.show()

# %% [markdown]
# Each panel compares a word's output vector in "dog bites man" with the same word's output in
# "man bites dog". Without positions the difference is exactly zero (left, blank); with
# positions added every word's output changes (right).
#
# ## 7 · Learned absolute embeddings
#
# The simplest alternative: give each position its own trainable vector, a table of shape
# `(max_len, d_model)` learned like a word embedding (GPT-2 does this).
# `LearnedPositionalEmbedding` adds row $p$ of the table to the token at position $p$.

# %%
learned = LearnedPositionalEmbedding(max_len=16, d_model=8)
print("parameters:", count_parameters(learned), "= max_len x d_model = 16 x 8")
print("output shape:", tuple(learned(torch.zeros(2, 10, 8)).shape))

# %% [markdown]
# The original paper found learned and sinusoidal encodings work about equally well on its
# tasks. The difference is what happens **past the training length**:

# %%
try:
    learned(torch.zeros(1, 20, 8))  # 20 positions, but only 16 rows exist
except ValueError as err:
    print("learned:", err)

long_pe = sinusoidal_encoding(20_000, 8)  # the formula works at any position
print("sinusoidal: PE(19999) =", long_pe[-1])

# %% [markdown]
# * A learned table simply **has no row** for position 16. There is nothing to look up.
# * Sinusoids are defined everywhere, so they *extrapolate in form*. Whether the *model*
#   extrapolates is a separate question: if it only ever saw positions up to 512 in training,
#   the attention patterns it learned may not transfer to position 5000, where the slow
#   frequencies reach phases it never saw. Sinusoidal encodings make longer inputs
#   *computable*, not automatically *good*.
#
# **Offsets during generation.** When a model generates one token at a time with a KV cache,
# the new token is at position $t$, not 0. Both modules take `offset` for this reason:

# %%
x_seq = torch.randn(1, 6, 8)
full = learned(x_seq)  # positions 0..5 at once
last_only = learned(x_seq[:, 5:], offset=5)  # the 6th token alone, at position 5
torch.testing.assert_close(last_only, full[:, 5:])
print("offset=5 gives the same vector as position 5 of the full sequence")

# %% [markdown]
# ## 8 · Look ahead: relative positions and rotary embeddings
#
# Absolute encodings tell each token *where it is*; attention then has to work out offsets
# from two absolute positions. **Relative** schemes put the offset $m - n$ straight into the
# score between query position $m$ and key position $n$. The most widely used today is
# **rotary position embedding (RoPE)** (Su et al., 2021; an extension beyond the original
# Transformer): instead of *adding* a vector to $x$, it *rotates* each (even, odd) pair of a
# query and a key by an angle proportional to its position, $R_m q$ and $R_n k$, with the
# same frequencies $\omega_i$ as above. Rotations preserve dot products up to the relative
# angle, so
#
# $$ (R_m q)\cdot(R_n k) = q \cdot R_{n-m}\, k \quad\text{depends only on } n - m. $$
#
# Check: the same query/key content at positions (3, 1) and at (10, 8) gives the same score;
# swapping the order (1, 3) does not.

# %%
rope = RotaryEmbedding(dim=8)
q_vec, k_vec = torch.randn(1, 8), torch.randn(1, 8)  # (L=1, dim)


def rotary_score(m, n):
    return (rope(q_vec, offset=m) @ rope(k_vec, offset=n).T).item()


print(f"score(m=3,  n=1) = {rotary_score(3, 1):.4f}")
print(f"score(m=10, n=8) = {rotary_score(10, 8):.4f}   (same offset -> same score)")
print(f"score(m=1,  n=3) = {rotary_score(1, 3):.4f}   (opposite direction -> different)")

# %% [markdown]
# The same check as a picture: put the *same* query content and the *same* key content at all 32
# positions and compute every score. The matrix is constant along each diagonal, so a head can
# learn a preference for "two tokens back" that works at every position.

# %%
L_r = 32
q_all = rope(q_vec.expand(L_r, 8), offset=0)  # (L, 8): q rotated to positions 0..31
k_all = rope(k_vec.expand(L_r, 8), offset=0)  # (L, 8)
rope_scores = q_all @ k_all.T  # (L, L): entry [m, n] = score(m, n)
fig, ax = plt.subplots(figsize=(5.5, 4.5))
im = ax.imshow(rope_scores, cmap="RdBu", vmin=-rope_scores.abs().max(), vmax=rope_scores.abs().max())
ax.set_xlabel("key position n")
ax.set_ylabel("query position m")
ax.set_title("RoPE scores, same content everywhere")
fig.colorbar(im, ax=ax)
plt.show()

# %% [markdown]
# RoPE is applied to $q$ and $k$ inside every attention layer (after the heads are split), not
# to $v$ and not to the input.
#
# ### Relative position **bias**: add a number per offset to the scores
#
# The simplest relative scheme does not touch $q$ or $k$ at all. It adds to every score a learned number that depends
# only on the offset $m - n$ (one table per head; T5, Raffel et al. 2020, shares entries between large offsets in
# logarithmic "buckets"):
#
# $$ A = \operatorname{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}} + B\Big), \qquad B_{mn} = b_{m-n}. $$
#
# $B$ is constant along each diagonal (a Toeplitz matrix), so the same content at the same *distance* gets the same
# score anywhere in the text. ALiBi (Press et al. 2022) fixes instead of learns it: $b_{m-n} = -s \cdot (m - n)$ for
# $n \le m$, a penalty growing linearly with distance, one slope $s$ per head; it was introduced to let models read
# texts longer than those seen in training. Below: ALiBi's bias for one head on 8 causal positions, and the weights it
# produces when every token has the same content (so the bias alone decides).

# %%
L_b, slope = 8, 0.5
offset = torch.arange(L_b)[:, None] - torch.arange(L_b)[None, :]  # (L, L): m - n
alibi = (-slope * offset + 0.0).masked_fill(~causal_mask(L_b), float("-inf"))  # (L, L), -inf above the diagonal
same = torch.zeros(L_b, L_b)  # equal content: every q·k is the same, here 0
w_alibi = torch.softmax(same + alibi, dim=-1)  # (L, L)
assert all(torch.allclose(alibi.diagonal(-k), alibi.diagonal(-k)[:1].expand(L_b - k)) for k in range(L_b))  # Toeplitz
print("row 7, weights on keys 0..7:", w_alibi[7].numpy().round(3))
print(f"weight on 'one back' vs 'two back', at rows 3 and 7: {w_alibi[3, 2] / w_alibi[3, 1]:.3f} and "
      f"{w_alibi[7, 6] / w_alibi[7, 5]:.3f} (= e^{slope} = {math.exp(slope):.3f} at every position)")
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
heatmap(alibi.masked_fill(~causal_mask(L_b), float("nan")), title=f"bias B (ALiBi, slope {slope}); blank = masked",
        ax=axes[0], annotate=False, xlabel="key n", ylabel="query m", cmap="Purples_r")
for m in range(L_b):
    for n in range(m + 1):
        axes[0].text(n, m, f"{alibi[m, n].item():.1f}", ha="center", va="center", fontsize=8,
                     color="white" if alibi[m, n] < -2 else "black")
attention_heatmap(w_alibi, title="weights when the content is equal", ax=axes[1], annotate=False)
fig.tight_layout()
plt.show()

# %% [markdown]
# Each row decays geometrically into the past: the most recent tokens get the most weight, at every position alike.
# Content scores $q \cdot k$ are added on top, so a strongly matching far token can still win. A common mistake is to add
# the bias *after* the softmax, or to build it from absolute positions ($b_m$ instead of $b_{m-n}$), which brings back
# everything that relative positions were meant to remove.
#
# ## Common mistakes
#
# * **Believing attention "sees" order.** Without positional information, self-attention is
#   permutation-equivariant; a causal mask adds only partial, indirect position information.
# * **Adding positions in the wrong place**, e.g. after the encoder instead of to the input
#   embeddings. The attention layers that need the order never see it.
# * **Forgetting `offset` during incremental decoding**: every new token would be encoded as
#   position 0.
# * **Mixing layouts.** Some code interleaves sin/cos (even/odd dimensions, as here), other code
#   puts all sines first and all cosines second. Both work, but weights trained with one layout
#   are wrong with the other.
# * **Assuming sinusoids make long inputs safe.** They are defined at every position; the model
#   may still fail beyond the lengths it was trained on. Learned tables cannot go beyond
#   `max_len` at all.
#
# ## Practice
#
# On paper first:
#
# 1. What is $\mathrm{PE}(0)$ for $d_\text{model} = 6$?
# 2. What is the wavelength of pair $i = 2$ when $d_\text{model} = 8$?
# 3. Without positional encoding, `x` has shape `(1, 5, d)`. What else equals
#    `mha(x)[0][:, [4, 3, 2, 1, 0]]`?
# 4. A model with `LearnedPositionalEmbedding(max_len=512, ...)` gets a 600-token prompt. What
#    happens, and what are your options?
#
# <details><summary><b>Answers</b> (click to open)</summary>
#
# 1. $(0, 1, 0, 1, 0, 1)$: every sine is $\sin 0 = 0$, every cosine $\cos 0 = 1$.
# 2. $\omega_2 = 10000^{-4/8} = 0.01$, so the wavelength is $2\pi / 0.01 = 200\pi \approx 628$ positions.
# 3. `mha(x[:, [4, 3, 2, 1, 0]])[0]`: reversing the input reverses the output (equivariance).
# 4. Positions 512..599 have no row, so it fails (attnlab raises `ValueError`). Crop to the last
#    512 tokens, or use a model whose positions extend (sinusoidal, rotary), knowing that quality
#    beyond the trained length is not guaranteed.
#
# </details>
#
# Check questions 1 and 2:

# %%
print("PE(0), d_model = 6:", sinusoidal_encoding(1, 6)[0])
print("wavelength of pair 2, d_model = 8:", 2 * torch.pi * 10000 ** (4 / 8))

# %% [markdown]
# Now a generated problem:

# %%
from attnlab.practice import practice

practice("pe_value")

# %% [markdown]
# ## Mastery check

# %%
from attnlab.practice import mastery_check

mastery_check("04")

# %% [markdown]
# **Next:** the exercise `exercises/04_positional_encoding/`, then lesson 05: several attention
# heads side by side.
