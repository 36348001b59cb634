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

gate("06")

# %% [markdown]
# # Lesson 06 · The Transformer block
#
# **Where we are.** Lessons 02–05 built the one operation that lets tokens talk to each other:
# (multi-head) attention. A single attention layer is not yet a model, though. Stack twenty of them
# directly on top of each other and the network will barely train; and apart from the softmax that picks
# the weights, each layer only forms weighted averages of linear projections of its inputs: no token ever
# gets a nonlinear computation of its own.
#
# A **Transformer block** wraps attention with three cheap ingredients that fix this:
#
# | ingredient | what it adds |
# |---|---|
# | position-wise **feed-forward network** (FFN) | per-token nonlinear computation ("thinking" after "communicating") |
# | **residual connections** | a learned *correction* instead of a rewrite; a short path for gradients |
# | **LayerNorm** (+ dropout) | keeps every token vector at a sane scale, whatever the depth |
#
# By the end of this lesson you can
#
# 1. write the FFN, explain why it never mixes positions, and prove it numerically;
# 2. explain residual connections as incremental refinement and as a gradient highway;
# 3. compute LayerNorm by hand and say why Transformers do not use BatchNorm;
# 4. tell **post-LN** (2017) from **pre-LN** and predict which one trains at depth, from an experiment you run;
# 5. count the parameters of a block: about **3.15 M** for the base model.
#
# Runtime: about a minute (about 20 s with `ATTNLAB_CI=1`, which shortens the training runs).

# %%
import math
import time

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from IPython.display import display
from torch import nn

from attnlab.data import CharTokenizer, get_batch, load_shakespeare
from attnlab.nn import (
    Decoder,
    EncoderBlock,
    FeedForward,
    LearnedPositionalEmbedding,
    MultiHeadAttention,
    count_parameters,
)
from attnlab.settings import course_settings
from attnlab.viz import heatmap

CI = course_settings().ci  # the automatic tests shrink every experiment
torch.manual_seed(0)
plt.rcParams["figure.dpi"] = 90

# %% [markdown]
# ## 1 · The position-wise feed-forward network
#
# Attention moves information *between* positions, but what it returns is a weighted average of
# value vectors: a linear mix. The FFN is where each token gets to do nonlinear work on what it just
# collected. For one token vector $x \in \mathbb{R}^{d_\text{model}}$ (a row of the sequence),
#
# $$
# \mathrm{FFN}(x) = \max(0,\; x W_1 + b_1)\, W_2 + b_2,
# \qquad W_1 \in \mathbb{R}^{d_\text{model} \times d_\text{ff}},\;
# W_2 \in \mathbb{R}^{d_\text{ff} \times d_\text{model}}
# $$
#
# (Vaswani et al. 2017, Eq. 2). Three things to notice:
#
# * **expand, nonlinearity, compress.** The hidden width is $d_\text{ff} = 4\,d_\text{model}$ in the
#   original model (512 → 2048 → 512). Apart from the softmax and LayerNorm's rescaling, the ReLU (GELU in GPT-2)
#   is the block's only nonlinearity.
# * **position-wise.** The formula takes *one row*. Applied to a sequence $X \in \mathbb{R}^{L \times d_\text{model}}$
#   it runs independently on each of the $L$ rows: row $i$ of the output depends on row $i$ of the input only.
# * **shared weights.** Every position uses the *same* $W_1, b_1, W_2, b_2$. (Equivalently: a 1-D convolution with kernel size 1.)
#
# `attnlab.nn.FeedForward` implements exactly this. Let us first re-derive it from its own weight matrices.

# %%
d_model, d_ff = 8, 32
ffn = FeedForward(d_model, d_ff)  # activation="relu" by default, as in the paper
x = torch.randn(1, 5, d_model)  # (B=1, L=5, d_model)

# nn.Linear stores W as (out, in), so x @ W.T is the paper's x W
hidden = torch.relu(x @ ffn.w_1.weight.T + ffn.w_1.bias)  # (1, 5, d_ff): expand + nonlinearity
mine = hidden @ ffn.w_2.weight.T + ffn.w_2.bias  # (1, 5, d_model): compress
print("hidden shape:", tuple(hidden.shape), " output shape:", tuple(mine.shape))
print(f"fraction of hidden units switched off by the ReLU: {(hidden == 0).float().mean().item():.2f}")

torch.testing.assert_close(mine, ffn(x))  # same numbers as the library
print("✓ matches attnlab.nn.FeedForward")

# %% [markdown]
# ### ReLU or GELU?
#
# GPT-2, BERT and most models since replace the ReLU by the **GELU** (Hendrycks & Gimpel 2016),
#
# $$ \mathrm{GELU}(x) = x\,\Phi(x) = \tfrac{x}{2}\Big(1 + \operatorname{erf}\big(x/\sqrt2\big)\Big), $$
#
# where $\Phi$ is the standard normal CDF: the input is multiplied by the probability that a standard normal variable
# is below it. Large positive $x$ pass almost unchanged (like ReLU), large negative $x$ give almost 0, but around 0 the
# curve is smooth and dips slightly below zero (minimum about $-0.17$ at $x \approx -0.75$). Why it helps: the ReLU's
# gradient is exactly 0 for every negative input, so a hidden unit that is negative for all inputs stops learning
# ("dead ReLU"); the GELU still passes a small gradient there, and its smooth kink tends to train a little better in
# Transformers. `FeedForward(..., activation="gelu")` uses the exact erf form; GPT-2's code used the tanh approximation
# $\tfrac{x}{2}\big(1 + \tanh(\sqrt{2/\pi}\,(x + 0.044715 x^3))\big)$, which differs slightly (printed below).
# Loading GPT-2's weights into a model with the exact form therefore changes its outputs a little: a common source of
# "almost matching" logits.

# %%
xs = torch.linspace(-4, 4, 401, requires_grad=True)
gelu_exact = 0.5 * xs * (1 + torch.erf(xs / math.sqrt(2)))
gelu_tanh = 0.5 * xs * (1 + torch.tanh(math.sqrt(2 / math.pi) * (xs + 0.044715 * xs**3)))
torch.testing.assert_close(gelu_exact, F.gelu(xs))  # the library's exact GELU
torch.testing.assert_close(gelu_tanh, F.gelu(xs, approximate="tanh"))
(d_gelu,) = torch.autograd.grad(gelu_exact.sum(), xs)
i_min = int(gelu_exact.argmin())
assert abs(gelu_exact[i_min].item() + 0.17) < 0.005 and abs(xs[i_min].item() + 0.75) < 0.03  # the text's numbers
print(f"GELU minimum {gelu_exact[i_min].item():.3f} at x = {xs[i_min].item():.2f}; "
      f"largest |exact - tanh| on [-4, 4]: {(gelu_exact - gelu_tanh).abs().max().item():.1e}")
ffn_gelu = FeedForward(d_model, d_ff, activation="gelu")
torch.testing.assert_close(ffn_gelu(x), F.gelu(x @ ffn_gelu.w_1.weight.T + ffn_gelu.w_1.bias) @ ffn_gelu.w_2.weight.T
                           + ffn_gelu.w_2.bias)
print("✓ FeedForward(activation='gelu') = GELU(x W1 + b1) W2 + b2")

fig, axes = plt.subplots(1, 2, figsize=(9, 3))
axes[0].plot(xs.detach(), torch.relu(xs).detach(), label="ReLU")
axes[0].plot(xs.detach(), gelu_exact.detach(), label="GELU  x·Φ(x)")
axes[0].set(title="activation", xlabel="x")
axes[1].plot(xs.detach(), (xs > 0).float().detach(), label="ReLU: 0 for every x < 0")
axes[1].plot(xs.detach(), d_gelu, label="GELU: small, nonzero")
axes[1].set(title="gradient", xlabel="x")
for ax in axes:
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown]
# ### Worked check: the FFN never mixes positions
#
# Claim: if we change the input at one position, only that position's output changes. For attention
# the opposite holds: every query may read the changed key/value, so every output row moves.
# We nudge position 2 and measure, for each position $i$, $\max |\Delta\,\text{output}_i|$.

# %%
mha = MultiHeadAttention(d_model, n_heads=2)
x_nudged = x.clone()
x_nudged[0, 2] += 1.0  # perturb ONE position

with torch.no_grad():
    change_ffn = (ffn(x_nudged) - ffn(x)).abs().amax(dim=-1)[0]  # (L,)
    change_mha = (mha(x_nudged)[0] - mha(x)[0]).abs().amax(dim=-1)[0]  # (L,)

print("position          :", list(range(5)))
print("FFN  max |change| :", [f"{v:.3f}" for v in change_ffn.tolist()])
print("MHA  max |change| :", [f"{v:.3f}" for v in change_mha.tolist()])
assert torch.all(change_ffn[[0, 1, 3, 4]] == 0) and change_ffn[2] > 0

# weights are shared: running the FFN on each row separately gives the same result as on the whole sequence
one_by_one = torch.stack([ffn(x[0, i]) for i in range(5)])  # 5 calls on (d_model,) vectors
torch.testing.assert_close(one_by_one, ffn(x)[0])
print("✓ row-by-row FFN == whole-sequence FFN (one set of weights for every position)")

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 2.8), sharey=True)
for ax, change, name in ((axes[0], change_ffn, "feed-forward (position-wise)"),
                         (axes[1], change_mha, "self-attention (mixes positions)")):
    colours = ["tab:red" if i == 2 else "tab:blue" for i in range(5)]
    ax.bar(range(5), change.numpy(), color=colours)
    ax.set_title(name)
    ax.set_xlabel("output position")
    ax.set_xticks(range(5))
axes[0].set_ylabel("max |change| of output row")
fig.suptitle("Perturb the input at position 2 (red): who notices?", y=1.03)
plt.show()


# %% [markdown]
# **Reading the figure.** Left: only the red bar is non-zero; the FFN is blind to every other position.
# Right: attention spreads the change to all rows. So inside a block, *attention communicates and the FFN computes*:
# the FFN holds roughly two thirds of a block's parameters (§6), yet it never looks at a neighbour.

# %% [markdown]
# ## 2 · Residual connections: refine, don't rewrite
#
# A residual (skip) connection adds the sublayer's output to its input instead of replacing it:
#
# $$ x_{\ell+1} = x_\ell + F_\ell(x_\ell). $$
#
# Two readings of this one line:
#
# * **Incremental refinement.** Each sublayer proposes an *update* $F_\ell(x_\ell)$ to the running
#   representation (often called the *residual stream*). If a sublayer has nothing useful to add it can
#   output ≈ 0 and the token passes through unchanged. Nothing has to be relearned at every layer.
# * **Gradient highway.** Differentiate: $\dfrac{\partial x_{\ell+1}}{\partial x_\ell} = I + \dfrac{\partial F_\ell}{\partial x_\ell}$.
#   Through $N$ layers the Jacobian is a product of $N$ factors $(I + J_\ell)$; expanding it, one term is the plain identity $I$.
#   So the loss gradient always has a direct, un-shrunk route back to the early layers. Without the skip, the Jacobian is $\prod_\ell J_\ell$,
#   and products of many matrices tend to shrink (or blow up) geometrically.
#
# The experiment below stacks 24 (LayerNorm → FFN) sublayers, once *with* and once *without* the skip,
# and reports the gradient norm that reaches each layer's weights from a simple loss.

# %%
def ffn_stack_grad_norms(depth: int, residual: bool, d: int = 32, seed: int = 0) -> list[float]:
    """Gradient norm of each FeedForward's first weight matrix, in a (LN -> FFN) stack."""
    torch.manual_seed(seed)
    ffns = nn.ModuleList(FeedForward(d, 4 * d) for _ in range(depth))
    norms = nn.ModuleList(nn.LayerNorm(d) for _ in range(depth))
    h = torch.randn(8, 16, d)  # (B, L, d)
    for f, ln in zip(ffns, norms):
        update = f(ln(h))
        h = h + update if residual else update
    loss = h.pow(2).mean()
    loss.backward()
    return [f.w_1.weight.grad.norm().item() for f in ffns]


depth = 24
g_res = ffn_stack_grad_norms(depth, residual=True)
g_plain = ffn_stack_grad_norms(depth, residual=False)
fig, ax = plt.subplots(figsize=(7, 3))
ax.semilogy(range(1, depth + 1), g_res, "o-", label="with residual  x + F(x)")
ax.semilogy(range(1, depth + 1), g_plain, "s-", label="without residual  F(x)")
ax.set_xlabel("layer (1 = closest to the input)")
ax.set_ylabel("‖∂loss/∂W₁‖ (log scale)")
ax.set_title("Gradient reaching each layer of a 24-layer stack, at initialisation")
ax.legend()
plt.show()
print(f"first/last layer gradient ratio: with residual {g_res[0] / g_res[-1]:.2f}, "
      f"without {g_plain[0] / g_plain[-1]:.3f}")

# %% [markdown]
# With the skip, the first layer receives a gradient about as large as the last one. Without it, the
# gradient fades as it travels down the stack, so the early layers learn much more slowly than the late ones.
# (LayerNorm inside each step already keeps the forward activations in range; the residual is what protects the *backward* pass.)

# %% [markdown]
# ## 3 · LayerNorm, one token at a time
#
# LayerNorm rescales **each token vector on its own**, using the mean and variance of its $d$ features:
#
# $$
# \mathrm{LN}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta,
# \qquad \mu = \frac1d \sum_{k=1}^d x_k,\quad \sigma^2 = \frac1d \sum_{k=1}^d (x_k - \mu)^2 ,
# $$
#
# with learned gain $\gamma$ and bias $\beta$ (initialised to 1 and 0) and a small $\varepsilon$ (1e-5) for safety.
# Note the $\frac1d$: it is the *population* variance, not the $\frac1{d-1}$ sample variance.
#
# **By hand** for $x = (2, 4, 6, 8)$: $\mu = 5$, the squared deviations are $9, 1, 1, 9$, so $\sigma^2 = 20/4 = 5$ and
# $\sigma = \sqrt 5 \approx 2.236$. Hence
# $\mathrm{LN}(x) \approx (-3, -1, 1, 3)/2.236 = (-1.342,\ -0.447,\ 0.447,\ 1.342)$ (with $\gamma = 1, \beta = 0$).

# %%
x4 = torch.tensor([2.0, 4.0, 6.0, 8.0])
mu = x4.mean()
var = ((x4 - mu) ** 2).mean()  # population variance (divide by d, not d - 1)
by_hand = (x4 - mu) / torch.sqrt(var + 1e-5)
print(f"mean = {mu.item():.3f}, variance = {var.item():.3f}")
print("by hand  :", [round(v, 3) for v in by_hand.tolist()])

ln = nn.LayerNorm(4)  # the LayerNorm used inside attnlab's blocks (gamma = 1, beta = 0 at init)
torch.testing.assert_close(by_hand, ln(x4))
print("✓ matches nn.LayerNorm")

# %% [markdown]
# ### Why not BatchNorm?
#
# BatchNorm normalises each *feature* using statistics over the **batch** (and, for sequences, over all positions).
# That is a poor fit for Transformers:
#
# * a token's output depends on **which other sequences** happen to share its batch, and on **how much padding** they contain;
# * at generation time we often run a batch of one, one token at a time: the batch statistics are then meaningless,
#   so BatchNorm must switch to running averages, and train and test behave differently.
#
# LayerNorm uses only the token's own features, so none of this can happen. Let us check both claims on the
# very same token: sentence 0's first token, placed in a batch with a short companion and then with a long, heavily padded one.

# %%
torch.manual_seed(1)
d = 6
sentence = torch.randn(4, d)  # 4 real tokens, (L, d)


def batch_with(companion_len: int, total_len: int) -> torch.Tensor:
    """Sentence 0 plus a companion sentence, both zero-padded to total_len: (2 * total_len, d) tokens."""
    seq0 = torch.zeros(total_len, d)
    seq0[:4] = sentence
    seq1 = torch.zeros(total_len, d)
    seq1[:companion_len] = torch.randn(companion_len, d) * 3 + 1
    return torch.cat([seq0, seq1])  # BatchNorm sees all tokens of the batch as one pile


bn, ln6 = nn.BatchNorm1d(d), nn.LayerNorm(d)
small, big = batch_with(3, 4), batch_with(12, 16)  # second batch: more padding, other companion
for name, norm in (("BatchNorm", bn), ("LayerNorm", ln6)):
    out_small, out_big = norm(small)[0], norm(big)[0]  # the same token in both batches
    print(f"{name}: token 0 changes by {(out_small - out_big).abs().max().item():.3f} when only the batch changes")

# %% [markdown]
# ## 4 · Dropout on the sublayer output
#
# The paper's *residual dropout* (§5.4) is applied to the sublayer output **before** it is added back:
# $x + \mathrm{Dropout}(F(x))$. Only the proposed update is thinned out; the residual stream itself passes through
# untouched, so regularisation never destroys the information already carried by $x$. Dropout is active only in
# `model.train()` mode; `model.eval()` turns it off, which is why evaluation and generation must call `eval()` first.

# %%
block = EncoderBlock(d_model=16, n_heads=2, d_ff=64, dropout=0.5, norm_first=True)
xb = torch.randn(1, 4, 16)
block.train()
a, b = block(xb), block(xb)
block.eval()
c, e = block(xb), block(xb)
print("train mode: two passes differ by", round((a - b).abs().max().item(), 3))
print("eval mode : two passes differ by", (c - e).abs().max().item())

# %% [markdown]
# ## 5 · Assembling the block: post-LN or pre-LN?
#
# An encoder block has two sublayers, self-attention (SA) and the FFN, each wrapped in residual + dropout + LayerNorm.
# There are two ways to place the LayerNorm:
#
# $$
# \textbf{post-LN (Vaswani et al. 2017):}\quad
# \begin{aligned} h &= \mathrm{LN}\big(x + \mathrm{SA}(x)\big)\\ y &= \mathrm{LN}\big(h + \mathrm{FFN}(h)\big)\end{aligned}
# $$
#
# $$
# \textbf{pre-LN (GPT-2 and most models since):}\quad
# \begin{aligned} h &= x + \mathrm{SA}\big(\mathrm{LN}(x)\big)\\ y &= h + \mathrm{FFN}\big(\mathrm{LN}(h)\big)\end{aligned}
# $$
#
# The ingredients are identical; only the order differs. But look at the residual stream:
#
# * in **post-LN** the stream itself is normalised after every sublayer, so the identity path of §2 is interrupted
#   by a LayerNorm at every step; gradients have to pass through $2N$ normalisations;
# * in **pre-LN** the stream $x \to h \to y$ is a pure sum of updates, a clean highway from the last layer to the first.
#   The price: the stream is never normalised, so a pre-LN stack ends with one **final LayerNorm**.
#
# In `attnlab.nn` the choice is one flag, `norm_first` (False = post-LN, True = pre-LN), and both branches are visible in
# `EncoderBlock.forward`. Let us re-derive one pre-LN block from its own submodules (dropout 0):

# %%
torch.manual_seed(0)
blk = EncoderBlock(d_model=16, n_heads=2, d_ff=64, norm_first=True).eval()
x16 = torch.randn(2, 5, 16)  # (B, L, d_model)
h = x16 + blk.self_attn(blk.norm1(x16))[0]  # attention sublayer: x + SA(LN(x))
y = h + blk.ffn(blk.norm2(h))  # feed-forward sublayer: h + FFN(LN(h))
torch.testing.assert_close(y, blk(x16))
print("✓ pre-LN by hand matches EncoderBlock(norm_first=True)")

blk_post = EncoderBlock(d_model=16, n_heads=2, d_ff=64, norm_first=False).eval()
h = blk_post.norm1(x16 + blk_post.self_attn(x16)[0])  # LN(x + SA(x))
y = blk_post.norm2(h + blk_post.ffn(h))  # LN(h + FFN(h))
torch.testing.assert_close(y, blk_post(x16))
print("✓ post-LN by hand matches EncoderBlock(norm_first=False)")

# %% [markdown]
# The two orders as pictures. Follow the purple residual path from the input to the output: in post-LN
# it passes a LayerNorm after each addition; in pre-LN it is additions only.

# %%
from attnlab.diagrams import block_pre_post_ln

block_pre_post_ln()
plt.show()

# %% [markdown]
# ### Experiment: does the order matter when the stack is deep?
#
# Xiong et al. (2020, *On Layer Normalization in the Transformer Architecture*) showed that post-LN models have large
# gradients near the output at initialisation and need a learning-rate **warm-up** to train; pre-LN ones do not.
# We test this on a small character-level language model (Tiny Shakespeare): token embedding + learned positions +
# a stack of causal blocks (`attnlab.nn.Decoder` without cross-attention) + a linear read-out. Same data, same seed,
# same Adam learning rate $3\times10^{-3}$ from step 1 (**no warm-up**); only `norm_first` changes.

# %%
text = load_shakespeare()
tok = CharTokenizer(text)
data = torch.tensor(tok.encode(text[:200_000]), dtype=torch.long)
V, T_CTX = tok.vocab_size, 32


class TinyLM(nn.Module):
    """Embeddings -> Decoder stack (causal, no cross-attention) -> vocabulary logits."""

    def __init__(self, n_layers: int, norm_first: bool, d: int = 64):
        super().__init__()
        self.tok = nn.Embedding(V, d)
        self.pos = LearnedPositionalEmbedding(T_CTX, d)
        self.stack = Decoder(n_layers, d, n_heads=4, d_ff=4 * d, norm_first=norm_first, cross_attention=False)
        self.head = nn.Linear(d, V)

    def forward(self, idx):  # idx: (B, T) -> logits (B, T, V)
        return self.head(self.stack(self.pos(self.tok(idx))))


def lm_batch(gen: torch.Generator, batch_size: int = 16):
    return get_batch(data, T_CTX, batch_size, gen)  # x, y: (B, T); y is x shifted left by one


# baseline: the loss of a model that ignores context and predicts each character by its frequency
freq = torch.bincount(data, minlength=V).float() / len(data)
UNIGRAM_LOSS = -(freq[freq > 0] * freq[freq > 0].log()).sum().item()
print(f"vocabulary: {V} characters; frequency-only baseline loss = {UNIGRAM_LOSS:.2f} nats/char")


def train_curve(n_layers: int, norm_first: bool, steps: int, lr: float = 3e-3) -> list[float]:
    torch.manual_seed(0)
    model = TinyLM(n_layers, norm_first)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(steps):
        x, y = lm_batch(gen)
        loss = F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


STEPS = 40 if CI else 150
t0 = time.perf_counter()
curves = {(n, nf): train_curve(n, nf, STEPS) for n in (2, 12) for nf in (False, True)}
print(f"4 training runs of {STEPS} steps in {time.perf_counter() - t0:.1f} s")


# %%
def smooth(values, k=5):
    return [sum(values[max(0, i - k + 1):i + 1]) / len(values[max(0, i - k + 1):i + 1]) for i in range(len(values))]


fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), sharey=True)
for ax, n in zip(axes, (2, 12)):
    for nf, style in ((False, "tab:red"), (True, "tab:green")):
        ax.plot(smooth(curves[(n, nf)]), color=style, label="pre-LN" if nf else "post-LN")
    ax.axhline(UNIGRAM_LOSS, color="grey", ls=":", lw=1)
    ax.set_title(f"{n} layers")
    ax.set_xlabel("training step (no warm-up)")
    ax.legend(loc="lower left")
axes[0].set_ylabel("training loss (nats / char)")
axes[1].annotate("3.30 = loss of guessing from\nletter frequencies alone", xy=(STEPS * 0.75, 3.3),
                 xytext=(STEPS * 0.35, 3.85), fontsize=8, color="grey", arrowprops=dict(arrowstyle="->", color="grey"))
fig.suptitle("Same model, same data: only the position of LayerNorm differs", y=1.02)
plt.show()
for (n, nf), c in curves.items():
    print(f"{n:2d} layers, {'pre-LN ' if nf else 'post-LN'}: final loss {sum(c[-5:]) / 5:.2f}")


# %% [markdown]
# **What you should see.** With 2 layers the two orders train equally well. With 12 layers and no warm-up, post-LN
# stalls on the plateau near 3.30 nats/char, the loss of a model that predicts each letter from its overall frequency and ignores the context,
# while pre-LN keeps improving. The post-LN model *can* be trained (the 2017 paper did, with 6 layers and a
# warm-up of 4000 steps), but it is fragile. Most deep models today use pre-LN (or a close variant), largely to remove this fragility.

# %% [markdown]
# ## 6 · How many parameters is a block?
#
# For one encoder block with biases and two LayerNorms ($d = d_\text{model}$):
#
# | part | parameters | base model ($d = 512$, $d_\text{ff} = 2048$) |
# |---|---|---|
# | attention $W_Q, W_K, W_V, W_O$ + biases | $4d^2 + 4d$ | 1,050,624 |
# | FFN $W_1, W_2$ + biases | $2\,d\,d_\text{ff} + d_\text{ff} + d$ | 2,099,712 |
# | 2 LayerNorms ($\gamma, \beta$) | $4d$ | 2,048 |
# | **total** | $4d^2 + 2\,d\,d_\text{ff} + 9d + d_\text{ff}$ | **3,152,384** ≈ 3.15 M |
#
# So with $d_\text{ff} = 4d$ a block has about $12 d^2$ parameters, two thirds of them in the FFN. A decoder block
# adds a cross-attention sublayer and a third LayerNorm: $+4d^2 + 6d$.

# %%
def block_params_formula(d: int, d_ff: int) -> int:
    return 4 * d * d + 4 * d + 2 * d * d_ff + d_ff + d + 4 * d


base = EncoderBlock(d_model=512, n_heads=8, d_ff=2048)
n_block = count_parameters(base)
print(f"one base encoder block : {n_block:,} parameters")
print(f"   of which attention  : {count_parameters(base.self_attn):,}")
print(f"   of which FFN        : {count_parameters(base.ffn):,}")
assert n_block == block_params_formula(512, 2048) == 3_152_384

stack6 = nn.ModuleList(EncoderBlock(512, 8, 2048) for _ in range(6))
print(f"6-block encoder stack  : {count_parameters(stack6):,} parameters (≈ 6 × 3.15 M)")


# %% [markdown]
# ## 7 · Try it: depth, LayerNorm placement and gradient flow
#
# The panel below builds the character model of §5 at the depth you choose, runs **one** forward/backward pass at
# initialisation, and plots the gradient norm that reaches each layer. The second panel counts parameters for
# the widths you pick.
#
# Things to try:
# * post-LN: as you add depth, do the gradients grow towards the output end of the stack? (Xiong et al. connect this
#   uneven profile to the need for warm-up.)
# * pre-LN: how flat is the profile, and how does its overall size change with depth?
# * set $d_\text{ff} = d_\text{model}$ and $d_\text{ff} = 8\,d_\text{model}$: where do most parameters live?

# %%
def grad_norms_at_init(n_layers: int, norm_first: bool) -> list[float]:
    torch.manual_seed(0)
    model = TinyLM(n_layers, norm_first)
    x, y = lm_batch(torch.Generator().manual_seed(0), batch_size=8)
    F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1)).backward()
    return [torch.sqrt(sum(p.grad.pow(2).sum() for p in layer.parameters())).item() for layer in model.stack.layers]


grad_out = widgets.Output()


def show_grad_norms(n_layers: int = 12, show: str = "both") -> None:
    norms = {nf: grad_norms_at_init(n_layers, nf) for nf in (False, True)}  # both, for one shared y-axis
    top = 1.1 * max(max(v) for v in norms.values())
    chosen = {"post-LN": [False], "pre-LN": [True], "both": [False, True]}[show]
    width = 0.8 / len(chosen)
    with grad_out:
        grad_out.clear_output(wait=True)
        fig, ax = plt.subplots(figsize=(8, 3))
        for k, nf in enumerate(chosen):
            offset = (k - (len(chosen) - 1) / 2) * width
            ax.bar([i + 1 + offset for i in range(n_layers)], norms[nf], width=width,
                   color="tab:green" if nf else "tab:red", label="pre-LN" if nf else "post-LN")
        ax.set_ylim(0, top)
        ax.set_xlabel("block (1 = next to the embeddings)")
        ax.set_ylabel("‖gradient‖ of the block")
        ax.set_title(f"{n_layers} blocks, one batch at initialisation")
        ax.legend()
        plt.show()


depth_slider = widgets.IntSlider(value=12, min=1, max=24, description="n_layers")
order_toggle = widgets.ToggleButtons(options=["post-LN", "pre-LN", "both"], value="both", description="show")
widgets.interactive_output(show_grad_norms, {"n_layers": depth_slider, "show": order_toggle})
display(widgets.VBox([widgets.HBox([depth_slider, order_toggle]), grad_out]))

# %%
count_out = widgets.Output()


def show_param_count(d_model: int = 512, ff_mult: int = 4) -> None:
    d_ff_ = ff_mult * d_model
    n_attn, n_ffn = 4 * d_model ** 2 + 4 * d_model, 2 * d_model * d_ff_ + d_ff_ + d_model
    with count_out:
        count_out.clear_output(wait=True)
        n_lib = count_parameters(EncoderBlock(d_model, 8, d_ff_))
        assert n_lib == n_attn + n_ffn + 4 * d_model
        print(f"d_model = {d_model}, d_ff = {d_ff_}:  one block = {n_lib:,} parameters "
              f"(attention {n_attn / n_lib:.0%}, FFN {n_ffn / n_lib:.0%}); 12 blocks = {12 * n_lib / 1e6:.1f} M")


d_slider = widgets.IntSlider(value=512, min=64, max=1024, step=64, description="d_model")
ff_slider = widgets.IntSlider(value=4, min=1, max=8, description="d_ff / d_model")
widgets.interactive_output(show_param_count, {"d_model": d_slider, "ff_mult": ff_slider})
display(widgets.VBox([widgets.HBox([d_slider, ff_slider]), count_out]))

# %% [markdown]
# ## Common mistakes
#
# * **Thinking the FFN mixes tokens.** It is applied row by row with shared weights; only attention moves information between positions.
# * **Putting dropout on the residual stream** (`Dropout(x + F(x))`) instead of on the update (`x + Dropout(F(x))`).
# * **Sample instead of population variance in LayerNorm** (dividing by $d-1$), or normalising over the sequence axis instead of the feature axis.
# * **Using BatchNorm** in a sequence model: the output then depends on the batch and the padding.
# * **Forgetting the final LayerNorm of a pre-LN stack**: its residual stream is never normalised otherwise.
# * **Writing the paper's post-LN equations but coding pre-LN** (or the reverse). Name the choice (`norm_first`) and check it.
# * **Counting FFN parameters as $d \cdot d_\text{ff}$**: there are two matrices, $2\,d\,d_\text{ff}$ (plus biases).

# %% [markdown]
# ## Summary
#
# * Block = attention (communicate) + FFN (compute), each wrapped as *update + residual*, with LayerNorm and dropout.
# * The FFN is position-wise: one shared MLP, $d \to 4d \to d$, no mixing across positions.
# * Residuals turn depth into incremental refinement and give gradients an identity path.
# * LayerNorm works per token; BatchNorm would tie a token to its batch.
# * Pre-LN (`norm_first=True`) keeps the residual highway clean and trains deep stacks without warm-up; post-LN is the 2017 original.
# * One base block ≈ 3.15 M parameters: $4d^2$ attention + $2\,d\,d_\text{ff}$ FFN + a few thousand biases and LayerNorm weights.
#
# Next: lesson 07 wires these blocks into encoders, decoders and cross-attention.

# %%
from attnlab.practice import mastery_check

mastery_check("06")
