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

gate("07")

# %% [markdown]
# # Lesson 07 · Encoders, decoders and cross-attention
#
# BERT, GPT and the original translation Transformer look like three different inventions. They are not.
# All three are stacks of the block from lesson 06; they differ in only two design decisions:
#
# 1. **the mask**: may a position see the positions to its right?
# 2. **where queries, keys and values come from**: the same sequence (*self-attention*) or another one
#    (*cross-attention*).
#
# Once you can read a model off those two choices, you can also predict what it is able to do: which models
# can generate text, which can read a whole sentence in both directions, which can translate.
#
# **You will be able to:**
# * name the three families and draw their masks;
# * write cross-attention with its shapes $(B, L, S)$ and the source padding mask;
# * state the causal-masking theorem, prove it by induction, and check it numerically through a whole stack;
# * choose a family for a task and justify it.
#
# Runtime: about 25 s on a quiet 2-core machine (it trains a small encoder–decoder); on a busy shared
# machine it can take three times as long.

# %%
import time

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from IPython.display import display
from torch.autograd.functional import jacobian

from attnlab.nn import (
    GPT,
    DecoderBlock,
    EncoderBlock,
    GPTConfig,
    MultiHeadAttention,
    causal_mask,
    count_parameters,
    merge_heads,
    padding_mask,
    scaled_dot_product_attention,
    split_heads,
)
from attnlab.viz import attention_heatmap, heatmap, mask_heatmap

torch.manual_seed(0)
plt.rcParams["figure.dpi"] = 90

# %% [markdown]
# ## 1 · Three families, one primitive
#
# | family | example | self-attention mask | cross-attention | typical use |
# |---|---|---|---|---|
# | **encoder-only** | BERT | padding only: every token sees the whole input, left *and* right | none | understanding: classify, tag, embed, retrieve |
# | **decoder-only** | GPT | **causal** (+ padding): token $i$ sees tokens $\le i$ | none | generation: next-token prediction, chat, code |
# | **encoder–decoder** | original Transformer, T5 | encoder: padding only; decoder: causal | decoder queries → encoder outputs (source padding mask) | sequence-to-sequence: translate, summarise, speech → text |
#
# In every case the operation is the same: $\mathrm{softmax}\big(QK^\top/\sqrt{d_k} + M\big)V$. Let us draw the masks
# $M$ for a tiny translation example, *the cat sleeps* → *le chat dort*, in a batch where the source has been padded
# to length 5. The decoder's input is the target shifted right, starting with a `<bos>` token (lesson 08, section 2, explains the shift and `<bos>`).
#
# First the three families as pictures: where Q, K and V come from, and a miniature of each mask (green = may attend).

# %%
from attnlab.diagrams import three_families

three_families()
plt.show()

# %%
src_tokens = ["the", "cat", "sleeps", "<pad>", "<pad>"]  # S = 5, 3 real tokens
tgt_tokens = ["<bos>", "le", "chat", "dort"]  # L = 4
S, L = len(src_tokens), len(tgt_tokens)
src_real = padding_mask([3], S)[0]  # (S,) True = real source token

enc_self = src_real[None, :].expand(S, S)  # (S, S): every query may read every real key
dec_self = causal_mask(L)  # (L, L): lower triangle
cross = src_real[None, :].expand(L, S)  # (L, S): decoder queries read every real source key

fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), gridspec_kw={"width_ratios": [S, L, S]})
mask_heatmap(enc_self, src_tokens, src_tokens, title="encoder self-attention\n(BERT; padding mask)", ax=axes[0])
mask_heatmap(dec_self, tgt_tokens, tgt_tokens, title="decoder self-attention\n(GPT; causal mask)", ax=axes[1])
mask_heatmap(cross, tgt_tokens, src_tokens, title="cross-attention (L × S)\nQ: decoder, K/V: encoder", ax=axes[2])
axes[2].set_ylabel("query (decoder position)")
axes[2].set_xlabel("key (encoder position)")
plt.tight_layout()
plt.show()

# %% [markdown]
# **Reading the masks** (✓ = may attend, ✗ = blocked):
# * *encoder*: full rows; only the `<pad>` columns are blocked. The word *cat* is interpreted in light of *sleeps*, to its right.
# * *decoder*: lower triangle. `chat` may use `<bos> le chat`, never `dort`, because at generation time `dort` does not exist yet.
# * *cross-attention*: a **rectangle** $L \times S$, not a triangle. The whole source sentence is known before the decoder starts,
#   so there is nothing to hide in it, except padding. An encoder–decoder model uses the first two masks in its two stacks and adds the third.
#
# A decoder-only model has only the middle picture. An encoder-only model has only the left one.

# %% [markdown]
# ## 2 · Cross-attention
#
# In cross-attention the **queries come from the decoder** and the **keys and values come from the encoder's output**
# (called the *memory*). With decoder states $Y \in \mathbb{R}^{L\times d_\text{model}}$ and memory $M \in \mathbb{R}^{S\times d_\text{model}}$:
#
# $$
# \mathrm{CrossAttn}(Y, M) = \mathrm{softmax}\!\left(\frac{(Y W_Q)(M W_K)^\top}{\sqrt{d_k}} + M_\text{pad}\right) (M W_V),
# \qquad \underbrace{(Y W_Q)}_{L \times d_k}\,\underbrace{(M W_K)^\top}_{d_k \times S} \;\to\; L \times S .
# $$
#
# So the weight matrix has one **row per target position** and one **column per source position**: shape $(B, L, S)$, or $(B, H, L, S)$ with heads.
# Every decoder position asks "which source words do I need right now?", and the answer can be any real source word.
# The only mask is the **source padding mask** (`key_padding_mask`, True = real token), broadcast over the $L$ query rows.
#
# With `attnlab.nn.MultiHeadAttention` cross-attention is just a call with a different `key`/`value`:

# %%
B, d_model, n_heads = 2, 16, 4
torch.manual_seed(0)
cross_attn = MultiHeadAttention(d_model, n_heads)
y = torch.randn(B, L, d_model)  # decoder states (queries):  (B, L=4, d_model)
memory = torch.randn(B, S, d_model)  # encoder output (keys, values): (B, S=5, d_model)
src_pad = padding_mask([5, 3], S)  # (B, S): sentence 0 has 5 real tokens, sentence 1 only 3

out, w = cross_attn(y, memory, memory, key_padding_mask=src_pad, need_weights=True)
print("out    :", tuple(out.shape), "= (B, L, d_model): one vector per TARGET position")
print("weights:", tuple(w.shape), "= (B, H, L, S)")
print("weights on sentence 1's padded source positions:", w[1, :, :, 3:].abs().max().item())
print("rows sum to 1:", torch.allclose(w.sum(-1), torch.ones(B, n_heads, L)))

# %% [markdown]
# Let us re-derive the same numbers from the module's projection matrices, step by step, and check them against the library.

# %%
q = split_heads(cross_attn.w_q(y), n_heads)  # (B, L, d_model) -> (B, H, L, d_k): queries from the DECODER
k = split_heads(cross_attn.w_k(memory), n_heads)  # (B, S, d_model) -> (B, H, S, d_k): keys from the ENCODER
v = split_heads(cross_attn.w_v(memory), n_heads)  # (B, H, S, d_v): values from the ENCODER
mask = src_pad[:, None, None, :]  # (B, S) -> (B, 1, 1, S): the same key columns blocked for every head and query
heads_out, my_w = scaled_dot_product_attention(q, k, v, mask)  # (B, H, L, d_v), (B, H, L, S)
my_out = cross_attn.w_o(merge_heads(heads_out))  # (B, L, d_model)

torch.testing.assert_close(my_w, w)
torch.testing.assert_close(my_out, out)
print("✓ cross-attention by hand matches MultiHeadAttention(y, memory, memory, key_padding_mask=...)")

# %% [markdown]
# **Padding really is invisible.** If we overwrite the memory at sentence 1's padded positions with garbage, the
# decoder's output must not move:

# %%
garbage = memory.clone()
garbage[1, 3:] = 100 * torch.randn(2, d_model)
out_garbage, _ = cross_attn(y, garbage, garbage, key_padding_mask=src_pad)
torch.testing.assert_close(out_garbage, out)
print("✓ output unchanged when padded memory rows are replaced by garbage")

fig, axes = plt.subplots(1, 2, figsize=(10, 3.3))
for b, ax in enumerate(axes):
    attention_heatmap(w[b].mean(0), tgt_tokens, src_tokens if b else src_tokens[:3] + ["all", "day"], ax=ax,
                      title=f"sentence {b}: cross-attention (mean over heads)")
plt.tight_layout()
plt.show()

# %% [markdown]
# This layer is untrained, so the weights are not meaningful yet; what matters is the *shape* of the picture: $L = 4$ rows
# (target positions) by $S = 5$ columns (source positions), and in sentence 1 the two padded columns are exactly zero.
# After training the rows become sharp alignments: the next section trains a small model and shows it. Careful with the shift, though: the query at
# position `chat` is the one that must produce the *next* word, *dort*, so it is that row which should look at *sleeps*.
#
# Inside `attnlab.nn.DecoderBlock` this call sits between the masked self-attention and the FFN; each of the three
# sublayers has its own residual connection and LayerNorm. So a decoder block carries one extra attention sublayer:

# %%
enc_block, dec_block = EncoderBlock(512, 8, 2048), DecoderBlock(512, 8, 2048)  # base model sizes
print(f"encoder block: {count_parameters(enc_block):,} parameters")
print(f"decoder block: {count_parameters(dec_block):,} parameters "
      f"(+ cross-attention {count_parameters(dec_block.cross_attn):,} + one LayerNorm {count_parameters(dec_block.norm2):,})")
assert count_parameters(dec_block) - count_parameters(enc_block) == 4 * 512 ** 2 + 4 * 512 + 2 * 512

# %% [markdown]
# ### A trained encoder–decoder: watch the alignment appear
#
# Translation needs a large corpus, but the mechanism shows on a toy task that a small model learns in a few seconds:
# **reverse a string** of 6 letters, `abcdef` → `fedcba`. The target word at output position $t$ is the source word at
# position $5 - t$, so a model that solves the task must learn to look there: its cross-attention should become an
# **anti-diagonal**, the toy version of a translation's word alignment (*le* ↔ *the*, *chat* ↔ *cat*). The model is `attnlab.nn.Transformer` (the full
# encoder–decoder of the original paper, post-LN, sinusoidal positions) at a tiny size: one encoder and one decoder
# layer, $d_\text{model} = 32$, 2 heads. The decoder input is the target shifted right behind `<bos>`, the targets end
# with `<eos>` (lesson 08 explains both).
#
# The 250 training steps below cost about 2 seconds of CPU time. On a quiet machine that is about the time they
# take; on a shared 2-core machine at load average 11 they took 17 s with one torch thread, while with two (torch's
# default there: one per core), at load 11–15, the same steps had not finished after 9 minutes: on a busy machine
# each step waits at every synchronisation for the thread that is not running. So the cell first asks
# `attnlab.fast.machine_policy` how many threads this machine can really give (the CPUs that other work
# leaves idle, a cgroup or hub CPU limit) and uses that many.

# %%
from attnlab.fast import apply_thread_policy, machine_policy
from attnlab.nn import Transformer, TransformerConfig

PAD, BOS, EOS = 0, 1, 2
letters = "abcdefgh"
itos = {PAD: "<pad>", BOS: "<bos>", EOS: "<eos>", **{3 + i: c for i, c in enumerate(letters)}}
N_REV = 6


def reversal_batch(n, gen):
    """n random strings: source (n, 6), decoder input (n, 7) = <bos> + target, decoder targets (n, 7) = target + <eos>."""
    src = torch.randint(3, 3 + len(letters), (n, N_REV), generator=gen)
    tgt = src.flip(1)  # the reversed string
    return src, torch.cat([torch.full((n, 1), BOS), tgt], 1), torch.cat([tgt, torch.full((n, 1), EOS)], 1)


apply_thread_policy(machine_policy())  # one thread on a busy machine: see the paragraph above
torch.manual_seed(0)
seq2seq = Transformer(TransformerConfig(src_vocab_size=len(itos), tgt_vocab_size=len(itos), d_model=32, n_heads=2,
                                        n_encoder_layers=1, n_decoder_layers=1, d_ff=64, dropout=0.0, max_len=16))
opt = torch.optim.Adam(seq2seq.parameters(), lr=3e-3)
gen = torch.Generator().manual_seed(1)
t0, cpu0 = time.perf_counter(), time.process_time()
rev_losses = []
for _step in range(250):
    src_b, dec_in_b, dec_out_b = reversal_batch(64, gen)
    logits_b = seq2seq(src_b, dec_in_b)  # (B, 7, V): teacher forcing
    loss_b = F.cross_entropy(logits_b.reshape(-1, len(itos)), dec_out_b.reshape(-1))
    opt.zero_grad()
    loss_b.backward()
    opt.step()
    rev_losses.append(loss_b.item())
src_t, _, dec_out_t = reversal_batch(500, torch.Generator().manual_seed(99))  # held-out strings
decoded = seq2seq.greedy_decode(src_t, BOS, N_REV + 1, EOS)  # (500, <= 8), generated without teacher forcing
exact = (decoded[:, 1:N_REV + 2] == dec_out_t).all(dim=1).float().mean().item()
print(f"trained 250 steps in {time.perf_counter() - t0:.1f} s ({time.process_time() - cpu0:.1f} s of CPU time), "
      f"final loss {rev_losses[-1]:.3f}; "
      f"held-out strings reversed exactly: {exact:.1%}")
example = src_t[:1]
print("example:", "".join(itos[i] for i in example[0].tolist()), "->",
      "".join(itos[i] for i in decoded[0, 1:N_REV + 1].tolist()))

# %% [markdown]
# Now read the cross-attention of the trained decoder on the example. A forward hook records what the cross-attention
# module was called with; calling it again with `need_weights=True` returns its $(B, H, L, S)$ weights.

# %%
seq2seq.eval()
cross = seq2seq.decoder.layers[0].cross_attn
calls = []
hook = cross.register_forward_hook(lambda mod, args, kwargs, out: calls.append((args, kwargs)), with_kwargs=True)
dec_in_example = torch.cat([torch.tensor([[BOS]]), decoded[:1, 1:N_REV + 1]], dim=1)  # (1, 7)
with torch.no_grad():
    seq2seq(example, dec_in_example)
hook.remove()
args, kwargs = calls[-1]
with torch.no_grad():
    _, cross_w = cross(*args, **{**kwargs, "need_weights": True})  # (1, H, L=7, S=6)
cross_mean = cross_w[0].mean(0)  # (7, 6) mean over heads
rows_q = [itos[i] for i in dec_in_example[0].tolist()]
cols_k = [itos[i] for i in example[0].tolist()]
expected = [N_REV - 1 - t for t in range(N_REV)]  # row t produces target t = source position 5 - t
aligned = sum(int(cross_mean[t].argmax()) == expected[t] for t in range(N_REV))
print(f"rows whose largest weight is on the source letter they must copy: {aligned} of {N_REV}; "
      f"mean weight there {cross_mean[range(N_REV), expected].mean():.2f}")
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
attention_heatmap(cross_mean, rows_q, cols_k, title="trained cross-attention (mean over heads)", ax=axes[0])
axes[0].set_ylabel("decoder input (query)")
axes[0].set_xlabel("source letter (key)")
axes[1].plot(rev_losses)
axes[1].set(yscale="log", xlabel="step", ylabel="training loss", title="reversal task: training loss")
axes[1].grid(alpha=0.3)
fig.tight_layout()
plt.show()

# %% [markdown]
# The anti-diagonal is the alignment: the row of `<bos>` (which must produce the first output letter, the *last* source
# letter) looks at the last source position, the next row one position earlier, and so on. Note the shift once more: the
# row is labelled with the decoder's *input* token, and it looks at the source letter of the *next* output. Nobody told
# the model about positions 5 − t; the alignment is what minimising the loss produced. In translation the same picture
# is mostly diagonal with local swaps where the word order differs (adjective–noun order: *the black cat* ↔ *le chat
# noir*, where *black* ↔ *noir* crosses *cat* ↔ *chat*), which is how Bahdanau et al. (2015) first showed attention
# weights as alignments.

# %% [markdown]
# ## 3 · The causal-masking theorem
#
# **Theorem.** In a stack of decoder blocks with causal self-attention, the output at position $i$ of *every* layer
# depends only on the input tokens $x_1, \dots, x_i$, whatever the number of layers.
#
# **Proof (induction over layers).** Write $h_i^{(\ell)}$ for row $i$ after layer $\ell$.
# * *Base:* $h_i^{(0)} = \text{embed}(x_i) + p_i$ depends on $x_i$ only.
# * *Step:* assume every $h_j^{(\ell)}$ depends only on $x_{\le j}$. In layer $\ell+1$, the causal mask lets row $i$ attend to rows
#   $j \le i$ only, and each of those depends on $x_{\le j} \subseteq x_{\le i}$. The other pieces of the block, the FFN,
#   the residual additions and LayerNorm, all act on row $i$ alone (lesson 06). So $h_i^{(\ell+1)}$ depends only on $x_{\le i}$. ∎
#
# Note what the proof needs: the mask in **every** self-attention layer (one unmasked layer lets future information in,
# and all later layers pass it on), and **no** operation that mixes rows other than the masked attention. A BatchNorm over the
# sequence axis, or a convolution looking to the right, would break the theorem.
#
# ### Check 1: perturb a token of a GPT
#
# `attnlab.nn.GPT` is a decoder-only stack. We change one input token at a time and record how much the logits at each
# position move. Entry $(i, j)$ of the matrix below is $\max |\Delta \text{logits}_i|$ after changing token $j$.

# %%
torch.manual_seed(0)
T = 8
gpt = GPT(GPTConfig(vocab_size=20, block_size=T, d_model=32, n_heads=4, n_layers=3)).eval()
idx = torch.randint(0, 20, (1, T))

with torch.no_grad():
    base_logits, _ = gpt(idx)  # (1, T, V)
    effect = torch.zeros(T, T)  # effect[i, j]: change at output i when input token j changes
    for j in range(T):
        changed = idx.clone()
        changed[0, j] = (changed[0, j] + 1) % 20  # a different token at position j
        new_logits, _ = gpt(changed)
        effect[:, j] = (new_logits - base_logits)[0].abs().amax(dim=-1)

future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # j > i
print(f"largest effect of a FUTURE token (j > i): {effect[future].max().item():.1e}")
print(f"smallest effect of a past/current token : {effect[~future].min().item():.1e}")
assert effect[future].max() < 1e-6 < effect[~future].min()


# %% [markdown]
# ### Check 2: the full dependency map, with and without the mask
#
# Perturbing tokens only tells us *whether* something changed. With continuous inputs we can measure *how strongly*
# output row $i$ depends on input row $j$: the norm of the Jacobian block
# $\left\lVert \partial h^{(N)}_i / \partial h^{(0)}_j \right\rVert$. We compute it for a 3-layer stack of `DecoderBlock`s
# without cross-attention (the GPT block), once with `is_causal=True` and once with the mask switched off, **same weights**.

# %%
def dependency_map(blocks, x: torch.Tensor, causal: bool) -> torch.Tensor:
    """(L, L) matrix: Frobenius norm of d output_i / d input_j through the blocks."""

    def run(inp):  # inp: (L, d) -> (L, d)
        h = inp[None]  # (1, L, d)
        for block in blocks:
            h = block(h, is_causal=causal)
        return h[0]

    J = jacobian(run, x)  # (L, d, L, d): d out[i, a] / d in[j, b]
    return J.pow(2).sum(dim=(1, 3)).sqrt()  # (L, L)


torch.manual_seed(0)
stack = [DecoderBlock(16, 2, 64, cross_attention=False, norm_first=True).eval() for _ in range(3)]
x_in = torch.randn(T, 16)
dep_causal = dependency_map(stack, x_in, causal=True)
dep_open = dependency_map(stack, x_in, causal=False)

FLOOR = 1e-4  # dependences below this (including exact zeros) share the darkest colour


def plot_dependency(dep: torch.Tensor, ax, title: str, xlabel: str = "input position j") -> None:
    """Log-scale heatmap of a dependency map; exact zeros are drawn at the floor (black)."""
    rows = [str(i) for i in range(dep.shape[0])]
    cols = [str(j) for j in range(dep.shape[1])]
    heatmap(torch.log10(dep.clamp_min(FLOOR)), rows, cols, ax=ax, annotate=False, cmap="magma",
            vmin=-4, vmax=1, title=title, xlabel=xlabel, ylabel="output position i")
    ax.figure.axes[-1].set_ylabel("log₁₀ ‖∂ out_i / ∂ in_j‖")


fig, axes = plt.subplots(1, 2, figsize=(11, 4.3))
plot_dependency(dep_causal, axes[0], "3 causal decoder blocks")
plot_dependency(dep_open, axes[1], "same blocks, causal mask removed")
fig.suptitle("How strongly does output i depend on input j?  (log scale; black = 0)", y=1.0)
plt.tight_layout()
plt.show()
print(f"with the mask   : largest dependence on a future input = {dep_causal[future].max().item():.1e}")
print(f"without the mask: largest dependence on a future input = {dep_open[future].max().item():.2f}")

# %% [markdown]
# The colour scale is logarithmic, so weak dependences are visible too. Left: everything above the diagonal is black
# (exactly zero): no output depends on a later input, after three layers, as the theorem says. The bright diagonal is the
# residual path (each row depends most on itself). Right: the same weights
# without the mask produce a full matrix; position 0 now "knows" the last token. Such a model cannot be used to generate
# left-to-right, and if you train it on next-token prediction it cheats by reading the answer (lesson 08 shows this happening).

# %% [markdown]
# ## 4 · Try it: pick a family, toggle the masks
#
# The panel builds a 2-layer model of the family you choose (random weights, $d_\text{model} = 16$) and draws the
# dependency map(s) $\lVert \partial\,\text{output}_i / \partial\,\text{input}_j \rVert$:
#
# * **encoder-only**: output vs. input of a stack of `EncoderBlock`s;
# * **decoder-only**: output vs. input of a stack of `DecoderBlock`s without cross-attention;
# * **encoder–decoder**: decoder output vs. decoder input (left) *and* vs. the source tokens fed to the encoder (right).
#
# The *causal* checkbox switches the causal mask of the stack's self-attention: the encoder's in encoder-only, the
# decoder's in the other two (an encoder–decoder's encoder always reads its source in both directions). The *pad* checkbox
# turns the last two source positions into padding.
#
# Predict each picture before you look: what happens to the encoder when you switch the causal mask on? What does padding the
# source do to the right-hand panel of the encoder–decoder? Does the causal mask ever restrict cross-attention?

# %%
L_demo, S_demo, D_demo = 6, 7, 16
torch.manual_seed(1)
demo_enc = [EncoderBlock(D_demo, 2, 4 * D_demo, norm_first=True).eval() for _ in range(2)]
demo_dec_only = [DecoderBlock(D_demo, 2, 4 * D_demo, norm_first=True, cross_attention=False).eval() for _ in range(2)]
demo_dec = [DecoderBlock(D_demo, 2, 4 * D_demo, norm_first=True).eval() for _ in range(2)]
tgt_in, src_in = torch.randn(L_demo, D_demo), torch.randn(S_demo, D_demo)


def family_maps(family: str, causal: bool, pad_source: bool):
    """Return a list of (dependency matrix, title, xlabel) for the chosen family."""
    n_real = S_demo - 2 if pad_source else S_demo
    src_keep = padding_mask([n_real], S_demo)  # (1, S) True = real token

    def encode(src, causal_encoder: bool):  # (S, d) -> (1, S, d)
        enc_mask = causal_mask(S_demo) if causal_encoder else None
        h = src[None]
        for block in demo_enc:
            h = block(h, attn_mask=enc_mask, key_padding_mask=src_keep)
        return h

    if family == "encoder-only":
        J = jacobian(lambda s: encode(s, causal)[0], src_in)  # (S, d, S, d)
        return [(J.pow(2).sum(dim=(1, 3)).sqrt(), "encoder output vs. its input", "input position j")]
    if family == "decoder-only":
        def run(t):
            h = t[None]
            for block in demo_dec_only:
                h = block(h, is_causal=causal)
            return h[0]
        J = jacobian(run, tgt_in)
        return [(J.pow(2).sum(dim=(1, 3)).sqrt(), "decoder output vs. its input", "input position j")]

    def run_encdec(t, s):  # encoder-decoder: the decoder reads the encoder's output through cross-attention
        mem = encode(s, causal_encoder=False)  # (1, S, d): the encoder reads the source both ways
        h = t[None]
        for block in demo_dec:
            h = block(h, mem, is_causal=causal, memory_key_padding_mask=src_keep)
        return h[0]

    J_t, J_s = jacobian(run_encdec, (tgt_in, src_in))  # (L, d, L, d), (L, d, S, d)
    return [(J_t.pow(2).sum(dim=(1, 3)).sqrt(), "decoder output vs. target input", "target position j"),
            (J_s.pow(2).sum(dim=(1, 3)).sqrt(), "decoder output vs. SOURCE tokens", "source position j")]


family_out = widgets.Output()


def show_family(family: str = "encoder–decoder", causal: bool = True, pad_source: bool = True) -> None:
    maps = family_maps(family.replace("–", "-"), causal, pad_source)
    with family_out:
        family_out.clear_output(wait=True)
        fig, axes = plt.subplots(1, len(maps), figsize=(5.2 * len(maps), 4), squeeze=False)
        for ax, (m, title, xlabel) in zip(axes[0], maps):
            plot_dependency(m, ax, title, xlabel)
        fig.suptitle(f"{family}: causal mask {'ON' if causal else 'OFF'}, "
                     f"source {'padded (last 2 = <pad>)' if pad_source else 'not padded'}", y=1.02)
        plt.tight_layout()
        plt.show()


family_pick = widgets.ToggleButtons(options=["encoder-only", "decoder-only", "encoder–decoder"],
                                    value="encoder–decoder", description="family")
causal_box = widgets.Checkbox(value=True, description="causal self-attention mask")
pad_box = widgets.Checkbox(value=True, description="pad the source (last 2 positions)")
widgets.interactive_output(show_family, {"family": family_pick, "causal": causal_box, "pad_source": pad_box})
display(widgets.VBox([family_pick, widgets.HBox([causal_box, pad_box]), family_out]))

# %% [markdown]
# What you should have found:
# * Encoder with the causal mask **on** becomes a triangle, the picture of a decoder: the mask, not the block class, decides what a model can see.
#   The padding only matters for encoder-only and encoder–decoder here (the decoder-only demo has no padding).
# * In the encoder–decoder, the right-hand panel stays **full** whatever you do to the causal checkbox: the causal mask lives in the
#   decoder's *self*-attention, while cross-attention may read the whole (real) source. Padded source columns are exactly zero.
#
# The same experiment as plain numbers, for the default setting (encoder–decoder, causal, padded source):

# %%
(dec_vs_tgt, *_), (dec_vs_src, *_) = family_maps("encoder-decoder", causal=True, pad_source=True)
print("future target positions, max dependence :", f"{torch.triu(dec_vs_tgt, 1).max().item():.1e}")
print("padded source positions, max dependence :", f"{dec_vs_src[:, -2:].max().item():.1e}")
print("real source positions,   min dependence :", f"{dec_vs_src[:, :-2].min().item():.2f}")

# %% [markdown]
# ## 5 · Which family for which task?
#
# Ask two questions: *is the whole input available at once?* and *is the output a new sequence that must be generated token by token?*
#
# | task | family | why |
# |---|---|---|
# | sentiment of a review, spam filter | encoder-only | whole text known; one label out; bidirectional context helps |
# | named-entity tagging, extractive QA | encoder-only | one label per input token, both sides of a word matter |
# | sentence embeddings for search | encoder-only | a vector per text, no generation |
# | open-ended text, chat, code completion | decoder-only | output is generated left to right; training and use share the causal mask |
# | translation, summarisation, speech → text | encoder–decoder (classic) | a fixed source read bidirectionally, a target generated causally, linked by cross-attention |
#
# In practice decoder-only models also do sequence-to-sequence work: the source is simply put in the prompt, and the causal stack
# reads it left to right before generating. What you give up is bidirectional reading of the source; what you gain is one model for everything.
#
# ### Pre-training, fine-tuning, and BERT's masked-language-model objective
#
# The families also differ in **how they are trained**. All of them are first **pre-trained** on a lot of raw text with a
# self-supervised objective (the labels come from the text itself), then **fine-tuned** on a small labelled task, starting
# from the pre-trained weights (often with a new small output layer on top).
#
# * A decoder-only model is pre-trained on **next-token prediction** (lesson 08): the causal mask makes every position a
#   training example.
# * An encoder-only model cannot predict the next token (it sees it). BERT (Devlin et al. 2019) uses the
#   **masked language model** (MLM) instead: choose 15 % of the input positions; replace 80 % of those by a `[MASK]` token,
#   10 % by a random token and leave 10 % unchanged; predict the original token **only at the chosen positions**. The loss
#   ignores every other position (`ignore_index`, lesson 08). The 80/10/10 split keeps the model from learning that
#   `[MASK]` is the only place where predictions matter, since `[MASK]` never appears in fine-tuning.
# * Encoder–decoders (T5) are pre-trained on a seq2seq version of the same idea: spans of the input are replaced by
#   sentinels, and the decoder writes out the missing spans.
#
# **Pooling: one vector for a whole text.** For classification an encoder's $L$ output vectors must become one. BERT puts
# a special `[CLS]` token first and fine-tunes its output vector as the summary (self-attention lets it gather from every
# token); the alternative is **mean pooling** over the real tokens, which must skip padding. The cell builds one MLM
# training example and both poolings:

# %%
gen = torch.Generator().manual_seed(0)
MASK_ID, VOCAB_MLM, CLS_ID = 1, 30, 2  # toy ids: 0 = pad, 1 = [MASK], 2 = [CLS]
tokens_mlm = torch.randint(3, VOCAB_MLM, (1, 1000), generator=gen)  # (B=1, L=1000) a tokenised text
chosen = torch.rand(tokens_mlm.shape, generator=gen) < 0.15  # positions the loss will use
roll = torch.rand(tokens_mlm.shape, generator=gen)
inputs_mlm = tokens_mlm.clone()
inputs_mlm[chosen & (roll < 0.8)] = MASK_ID  # 80 %: [MASK]
random_ids = torch.randint(3, VOCAB_MLM, tokens_mlm.shape, generator=gen)
swap = chosen & (roll >= 0.8) & (roll < 0.9)
inputs_mlm[swap] = random_ids[swap]  # 10 %: a random token; the last 10 % stay unchanged
labels_mlm = tokens_mlm.masked_fill(~chosen, -100)  # -100: F.cross_entropy's default ignore_index
n_mask = int((inputs_mlm == MASK_ID).sum())
n_random = int((chosen & (inputs_mlm != tokens_mlm) & (inputs_mlm != MASK_ID)).sum())
print(f"{int(chosen.sum())} of {tokens_mlm.numel()} positions chosen: {n_mask} became [MASK], {n_random} a different "
      f"random token, the rest of them unchanged (a random swap can draw the same token); labels elsewhere are -100")

encoder_demo = EncoderBlock(16, 2, 32).eval()
x_demo = torch.randn(2, 5, 16)  # (B, L, d_model); sentence 1 has 2 padded positions
real = padding_mask([5, 3], 5)  # (B, L) True = real token
with torch.no_grad():
    h_demo = encoder_demo(x_demo, key_padding_mask=real)  # (B, L, d_model)
cls_vector = h_demo[:, 0]  # (B, d_model): the output at position 0, where [CLS] would sit
mean_vector = (h_demo * real[..., None]).sum(1) / real.sum(1, keepdim=True)  # (B, d_model): mean over REAL tokens
wrong_mean = h_demo.mean(1)  # the mistake: padded positions averaged in
print(f"[CLS] pooling {tuple(cls_vector.shape)}, mean pooling {tuple(mean_vector.shape)}; "
      f"sentence 1 with pads averaged in differs by {(wrong_mean[1] - mean_vector[1]).abs().max():.3f}")

# %% [markdown]
# <details><summary><b>Quick check:</b> why can't you sample text from BERT left to right?</summary>
#
# Its self-attention is bidirectional, so during training each position could see the tokens to its right. At generation time
# those tokens do not exist, so the conditional distributions it learned are not the ones left-to-right sampling needs.
# </details>

# %% [markdown]
# ## Common mistakes
#
# * **Forgetting the causal mask** in the decoder's self-attention (or in one of its layers). The loss looks great; generation is garbage.
# * **Putting a causal mask on cross-attention.** The source is fully known; the $(L, S)$ cross-attention mask should block padding only.
#   (`causal_mask(L, S)` with $S \neq L$ would even misalign it, as it is built for KV-cache alignment.)
# * **Swapping the roles**: queries must come from the decoder and keys/values from the encoder memory; the output then has $L$ rows (target length).
# * **Padding mask on the wrong axis**: it blocks *key columns* — `pad[:, None, :]` for $(B, L, S)$, `pad[:, None, None, :]` for $(B, H, L, S)$ —
#   not query rows.
# * **Using the target padding mask for the source** (or the reverse). Cross-attention needs the *source* (memory) padding mask.
# * **Believing only the mask of the last layer matters.** Leakage from any single unmasked layer flows up through all later layers.
#
# ## Summary
#
# * Encoder-only, decoder-only and encoder–decoder models differ in masks and in where $Q, K, V$ come from, not in the attention formula.
# * Cross-attention: $Q$ from the decoder, $K, V$ from the encoder memory, weights $(B, H, L, S)$, only the source padding mask.
# * Causal masking in every layer ⇒ no position depends on later tokens, through any depth (induction; checked by perturbation and Jacobians).
# * Pick the family by asking whether the input is fully known and whether the output must be generated.
#
# Next: lesson 08 trains a decoder with teacher forcing and turns it into a text generator.

# %%
from attnlab.practice import mastery_check

mastery_check("07")
