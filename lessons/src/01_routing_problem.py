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

gate("01")

# %% [markdown]
# # Lesson 01 · The routing problem
#
# A sequence model has one job that is easy to overlook: **moving information between positions**.
# To predict the next word, the model must bring together facts that sit at different places in the
# text, sometimes next to each other, often far apart.
#
# This lesson asks one question: *how many steps does information need to travel from the position
# where it appears to the position where it is needed?* We compare three answers:
#
# | Architecture | Steps between positions $i$ and $j$ |
# |---|---|
# | recurrent network (RNN) | $O(\lvert i-j \rvert)$ |
# | stack of convolutions, kernel $k$ | $O(\lvert i-j \rvert / k)$, or $O(\log_k \lvert i-j \rvert)$ with dilation |
# | attention | $O(1)$: one step |
#
# Then we build the tool that achieves one step: attention as a **soft, differentiable dictionary
# lookup**.
#
# **You will be able to:** explain why long paths hurt both the forward signal and the gradient;
# compute attention weights and outputs for a tiny example by hand; explain why the output of
# attention always lies inside the convex hull of the values.

# %%
# %matplotlib inline
import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Polygon

from attnlab.fast.timing import claim, paired_ratio
from attnlab.nn import scaled_dot_product_attention

torch.manual_seed(0)
torch.set_printoptions(precision=4, sci_mode=False)
np.set_printoptions(precision=4, suppress=True)
plt.rcParams["figure.dpi"] = 100

# %% [markdown]
# ## 1 · The agreement trap
#
# Finish the sentence:
#
# > *The keys to the cabinet near the door* \_\_\_ *on the table.*
#
# The answer is **are**: the subject is *keys*, which is plural. But the two nouns closest to the
# blank, *cabinet* and *door*, are both singular. A model that mostly trusts recent words will be
# tempted to write *is*. The word that decides the verb is the **farthest** noun, and the words in
# between are distractors.
#
# Relevance and proximity have come apart. To get this right the model must **route** one feature,
# the grammatical number of *keys*, across six intervening words to the blank.

# %%
tokens = ["The", "keys", "to", "the", "cabinet", "near", "the", "door", "___"]
role = {1: ("controller (plural)", "#2ca02c"), 4: ("distractor", "#ff7f0e"), 7: ("distractor", "#ff7f0e")}

fig, ax = plt.subplots(figsize=(10, 3.2))
for i, word in enumerate(tokens):
    label, colour = role.get(i, ("", "#eeeeee"))
    if word == "___":
        colour = "#d62728"
    ax.add_patch(FancyBboxPatch((i - 0.42, 0), 0.84, 0.6, boxstyle="round,pad=0.04",
                                facecolor=colour, edgecolor="0.3", alpha=0.85))
    ax.text(i, 0.3, word, ha="center", va="center", fontsize=11,
            color="white" if word == "___" else "black")
    if label:
        ax.text(i, -0.3, label, ha="center", va="center", fontsize=9, color=colour)
blank = len(tokens) - 1
ax.add_patch(FancyArrowPatch((blank, 0.65), (1, 0.65), connectionstyle="arc3,rad=0.35",
                             arrowstyle="-|>", mutation_scale=18, lw=2.5, color="#2ca02c"))
ax.text(4.5, 2.05, "relevant: 7 positions back  →  'are'", ha="center", color="#2ca02c", fontsize=11)
for target, rad in ((4, 0.25), (7, 0.6)):
    ax.add_patch(FancyArrowPatch((blank, 0.65), (target, 0.65), connectionstyle=f"arc3,rad={rad}",
                                 arrowstyle="-|>", mutation_scale=12, lw=1.2, ls="--", color="#ff7f0e"))
ax.text(4.0, -0.75, "dashed: close but irrelevant  →  'is'", ha="center", color="#ff7f0e", fontsize=10)
ax.set_xlim(-0.7, len(tokens) - 0.3)
ax.set_ylim(-1.0, 2.3)
ax.axis("off")
ax.set_title("Which earlier word should the blank listen to?")
plt.show()

# %% [markdown]
# ### A toy model of the trap
#
# Give every word one number feature: $+1$ for a plural noun, $-1$ for a singular noun, $0$ otherwise.
# Compare two ways of summarising the prefix at the blank:
#
# * **recency**: a running average that halves the weight of each older word, like a simple recurrent
#   state that slowly forgets;
# * **lookup**: put all the weight on the word that matters (here we hand-pick it; attention will
#   learn to find it).
#
# A positive summary predicts *are*, a negative one predicts *is*.

# %%
number = torch.tensor([0., +1., 0., 0., -1., 0., 0., -1.])  # one entry per word before the blank
distance = torch.arange(len(number) - 1, -1, -1.0)            # 7, 6, ..., 0 words back from "door"
recency_weights = 0.5 ** distance
recency_weights = recency_weights / recency_weights.sum()       # weights sum to 1
recency = (recency_weights * number).sum()
lookup = number[1]                                              # all weight on "keys"
print(f"recency summary = {recency:+.3f}  ->  predicts '{'are' if recency > 0 else 'is'}'")
print(f"lookup summary  = {lookup:+.3f}  ->  predicts '{'are' if lookup > 0 else 'is'}'")
print(f"weight of 'keys' in the recency summary: {recency_weights[1]:.1%}")


# %% [markdown]
# The recency summary is dominated by *door*, the last noun. The plural signal of *keys* is still in
# there, but with weight $0.5^6 / \sum$ (printed above, under 1 %): it has been diluted on its way through six words.
# The rest of this lesson is about that journey.

# %% [markdown]
# ## 2 · Path length: how far does information travel?
#
# Picture the computation as a graph: one node per position per layer, and an edge wherever one
# node's value is computed from another. The **path length** between input position $j$ and output
# position $i$ is the smallest number of edges from one to the other.
#
# * **RNN.** $h_t = f(h_{t-1}, x_t)$. Position $j$ reaches position $i$ only through
#   $h_j, h_{j+1}, \dots, h_i$: that is $i-j$ steps, so $O(n)$ for a distance $n$.
# * **Convolutions with kernel $k$.** Each layer mixes a window of $k$ neighbours, so the reach grows by
#   $k-1$ positions per layer: $\lceil n/(k-1) \rceil$ layers, $O(n/k)$. With **dilations** $1, k, k^2, \dots$
#   the reach multiplies by $k$ per layer: $\lceil \log_k (n+1) \rceil$ layers, $O(\log_k n)$.
# * **Attention.** Every position reads every other position directly: $1$ step, $O(1)$.
#
# The diagram draws the three graphs for 8 positions and highlights the shortest path from the first
# input to the last output.

# %%
def draw_nodes(ax, xs, y, colour="white"):
    ax.scatter(xs, [y] * len(xs), s=160, facecolor=colour, edgecolor="0.3", zorder=3)


def draw_edge(ax, a, b, hot=False):
    ax.annotate("", xy=b, xytext=a, zorder=2, arrowprops=dict(
        arrowstyle="-|>", lw=2.2 if hot else 0.6, color="tab:red" if hot else "0.7", shrinkA=6, shrinkB=6))


n_pos = 8
xs = list(range(n_pos))
fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))

ax = axes[0]                                                  # RNN: chain of hidden states
draw_nodes(ax, xs, 0)
draw_nodes(ax, xs, 1, "#dbe9f6")
for t in xs:
    draw_edge(ax, (t, 0), (t, 1), hot=(t == 0))
    if t + 1 < n_pos:
        draw_edge(ax, (t, 1), (t + 1, 1), hot=True)
ax.set_title(f"RNN: {n_pos - 1} recurrent steps from h₁ to h₈ (grows with n)")
ax.set_yticks([0, 1], ["inputs x", "hidden h"])

ax = axes[1]                                                  # causal convolutions, kernel 3
k_conv, n_layers = 3, math.ceil((n_pos - 1) / 2)
for layer in range(n_layers + 1):
    draw_nodes(ax, xs, layer, "white" if layer == 0 else "#e2f0d9")
hot_path = {(layer, min(2 * layer, n_pos - 1)) for layer in range(n_layers + 1)}
for layer in range(1, n_layers + 1):
    for t in xs:
        for src in range(max(0, t - k_conv + 1), t + 1):
            hot = (layer, t) in hot_path and (layer - 1, src) in hot_path
            draw_edge(ax, (src, layer - 1), (t, layer), hot=hot)
ax.set_title(f"convolutions, k = {k_conv}: {n_layers} layers to cover 8 positions")
ax.set_yticks(range(n_layers + 1), ["inputs x"] + [f"layer {i}" for i in range(1, n_layers + 1)])

ax = axes[2]                                                  # one attention layer, last query
draw_nodes(ax, xs, 0)
draw_nodes(ax, xs, 1, "#fde9c9")
for src in xs:
    draw_edge(ax, (src, 0), (n_pos - 1, 1), hot=(src == 0))
ax.set_title("attention: 1 step from any input to any output")
ax.set_yticks([0, 1], ["inputs x", "outputs"])

for ax in axes:
    ax.set_xticks(xs, [str(t + 1) for t in xs])
    ax.set_xlabel("position")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
axes[2].set_ylim(-0.5, 1.5)
axes[0].set_ylim(-0.5, 1.5)
fig.tight_layout()
plt.show()


# %% [markdown]
# ### Checking the convolution count numerically
#
# The claim "each layer of kernel $k$ adds $k-1$ positions of reach" can be measured instead of
# believed. Build a stack of causal 1-D convolutions, take the gradient of the **last** output with
# respect to the inputs, and count which inputs have a nonzero gradient: that set is the receptive
# field.

# %%
def receptive_field(n_layers, kernel, dilation_growth=1, length=128):
    """Number of input positions that can influence the last output of a causal conv stack.

    The input must be longer than the reach, or the count is cut off at ``length``."""
    layers = []
    for i in range(n_layers):
        dilation = dilation_growth ** i
        layers += [torch.nn.ConstantPad1d(((kernel - 1) * dilation, 0), 0.0),  # causal: pad left only
                   torch.nn.Conv1d(1, 1, kernel, dilation=dilation), torch.nn.Tanh()]
    net = torch.nn.Sequential(*layers)
    x = torch.randn(1, 1, length, requires_grad=True)                      # (batch, channels, length)
    net(x)[0, 0, -1].backward()
    return int((x.grad[0, 0] != 0).sum())


for n_layers in (1, 2, 3, 4):
    plain = receptive_field(n_layers, kernel=3)
    dilated = receptive_field(n_layers, kernel=3, dilation_growth=3)
    assert plain == 1 + n_layers * 2 and dilated == 3**n_layers, (plain, dilated)  # the formulas, checked
    print(f"{n_layers} layers, k=3: reach {plain:2d} = 1 + {n_layers}·2   |   "
          f"dilations 1,3,9,...: reach {dilated:2d} = 3^{n_layers} = {3**n_layers}")

# %% [markdown]
# The measured reach matches the formulas: $1 + L(k-1)$ without dilation, $k^L$ with dilations
# $1, k, k^2, \dots$ (the `assert` in the loop checks every row, so this sentence cannot drift from
# the numbers). One trap when measuring: the input must be longer than the reach. With 64 inputs,
# four dilated layers would report a reach of 64, not 81, because there is nothing further back to
# reach. Inverting the formulas gives the path lengths plotted below.

# %%
distances = np.arange(1, 1025)
paths = {
    "RNN: n": distances,
    "conv, k=3: ⌈n/2⌉": np.ceil(distances / 2),
    "conv, k=9: ⌈n/8⌉": np.ceil(distances / 8),
    "dilated conv, k=3: ⌈log₃(n+1)⌉": np.ceil(np.log(distances + 1) / np.log(3) - 1e-9),
    "attention: 1": np.ones_like(distances),
}
fig, ax = plt.subplots(figsize=(7.5, 4.2))
for (label, steps), style in zip(paths.items(), ["-", "-", "--", "-.", "-"]):
    ax.plot(distances, steps, style, lw=2.2 if "attention" in label else 1.6, label=label)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("distance n between the two positions")
ax.set_ylabel("steps (layers or time steps) on the path")
ax.set_title("Path length between two positions")
ax.legend(fontsize=9)
ax.grid(alpha=0.3, which="both")
plt.show()

# %% [markdown]
# ### The second criterion: how much must happen one after another?
#
# Path length is about *learning*. A second property decides how fast a layer *runs* on parallel hardware (GPU cores, or
# just the vector units of a CPU): the number of **sequential operations**, steps that cannot start before the previous
# one has finished. An RNN must compute $h_1$ before $h_2$ before $h_3$: $n$ sequential steps per layer, however many
# cores are idle. A convolution or an attention layer computes all positions at once: one step, whose work can be spread
# over as many cores as there are. Vaswani et al. (2017, Table 1) compare the layers on exactly these criteria:
#
# | layer | sequential operations | maximum path length | work per layer |
# |---|---|---|---|
# | recurrent | $O(n)$ | $O(n)$ | $O(n \cdot d^2)$ |
# | convolutional, kernel $k$ | $O(1)$ | $O(\log_k n)$ (dilated) | $O(k \cdot n \cdot d^2)$ |
# | self-attention | $O(1)$ | $O(1)$ | $O(n^2 \cdot d)$ |
#
# Attention wins on both of the first two columns and pays in the third (lesson 10 measures it). The measurement
# below runs the same sequence through a tanh RNN step by step and through one attention layer. The attention layer
# does *more* arithmetic (printed), but in one step that the hardware can spread out; the RNN's smaller amount of work
# has to happen in 256 rounds, each waiting for the last.
#
# What is measured, and how: one forward pass of each (no gradients), on this machine, with the number of torch threads
# the course's thread policy picks for it (`attnlab.fast.machine_policy`: on a busy machine that is fewer threads than
# cores). A single timing on a shared machine can be off by 2x, so the cell times the two in 15 **paired rounds**
# (one call of each per round, their order alternating) and prints the median of the per-round ratios
# RNN time / attention time with its quartiles, then checks the claim of this paragraph on those figures: the RNN takes
# longer (the lower quartile of the ratio is above 1). A few seconds.

# %%
n_par, d_par = 256, 64
x_par = torch.randn(1, n_par, d_par)
W_par = torch.randn(d_par, d_par) / math.sqrt(d_par)


def rnn_pass():
    h = torch.zeros(1, d_par)
    for t in range(n_par):  # n_par sequential steps: step t needs h from step t - 1
        h = torch.tanh(h @ W_par + x_par[:, t])
    return h


def attention_pass():
    return scaled_dot_product_attention(x_par, x_par, x_par)[0]  # all positions in one step


ratio = paired_ratio(rnn_pass, attention_pass, rounds=15)
print(f"n = {n_par}: {ratio.text('RNN, 256 sequential steps', 'attention, 1 step')}")
print(f"multiply-adds: RNN n·d² = {n_par * d_par * d_par:,}, attention 2·n²·d = {2 * n_par * n_par * d_par:,}")
claim(ratio.q1 > 1, "the RNN's sequential steps take longer than attention's one step, despite less arithmetic",
      f"lower quartile of RNN time / attention time: {ratio.q1:.2f}")


# %% [markdown]
# ## 3 · Why long paths hurt learning: a product of Jacobians
#
# A long path is a problem even when the network *could* carry the information, because training has
# to send the gradient back along the same path. For an RNN, the chain rule gives
#
# $$
# \frac{\partial h_t}{\partial h_s} \;=\; \prod_{u=s+1}^{t} \frac{\partial h_u}{\partial h_{u-1}} \;=\; J_t\, J_{t-1} \cdots J_{s+1},
# $$
#
# a product of $t-s$ Jacobian matrices. Multiplying many matrices behaves like multiplying many numbers:
# if each one shrinks vectors a little (a typical stretch factor, or spectral radius, $\rho < 1$), the product shrinks
# **exponentially**, like $\rho^{t-s}$. If each one stretches a little ($\rho > 1$), it explodes. Only
# $\rho$ very close to 1 keeps the gradient roughly constant, even then it drifts, and a network
# cannot hold that balance for every input over thousands of steps.
#
# Let us check with random $32 \times 32$ Jacobians whose entries are drawn with variance $\rho^2/32$.
# Such a matrix stretches a vector by a factor $\rho$ on average (precisely: $\mathbb{E}\,\lVert Jv\rVert^2 = \rho^2 \lVert v\rVert^2$),
# and its eigenvalues fill a disc of radius about $\rho$.

# %%
def jacobian_product_norms(rho, n_steps, dim=32, trials=16, seed=0):
    """Median over trials of ‖J_n ⋯ J_1 v‖ for a unit vector v, for n = 1 .. n_steps."""
    gen = torch.Generator().manual_seed(seed)
    v = torch.randn(trials, dim, 1, generator=gen)
    v = v / v.norm(dim=1, keepdim=True)                                      # (trials, dim, 1) unit vectors
    norms = []
    for _ in range(n_steps):
        J = torch.randn(trials, dim, dim, generator=gen) * rho / math.sqrt(dim)  # (trials, dim, dim)
        v = J @ v
        norms.append(v.norm(dim=1).median().item())
    return np.array(norms)


gen = torch.Generator().manual_seed(1)
J_samples = torch.randn(500, 32, 32, generator=gen) * 0.9 / math.sqrt(32)       # 500 Jacobians with ρ = 0.9
unit = torch.nn.functional.normalize(torch.randn(500, 32, 1, generator=gen), dim=1)
print(f"average stretch ‖Jv‖/‖v‖, root mean square over 500 samples: {(J_samples @ unit).norm(dim=1).pow(2).mean().sqrt():.3f}")

# %%
n_steps = 100
fig, ax = plt.subplots(figsize=(7.5, 4.2))
for rho, colour in zip([0.8, 0.9, 1.0, 1.1, 1.2], ["#08519c", "#6baed6", "0.3", "#fc9272", "#a50f15"]):
    ax.plot(range(1, n_steps + 1), jacobian_product_norms(rho, n_steps), color=colour, lw=2, label=f"ρ = {rho}")
ax.axhline(1.0, color="0.6", lw=0.8)
ax.set_yscale("log")
ax.set_xlabel("path length n (number of Jacobians multiplied)")
ax.set_ylabel("gradient size  ‖J_n ⋯ J_1 v‖")
ax.set_title("Gradients through a chain vanish (ρ < 1) or explode (ρ > 1) exponentially")
ax.legend()
ax.grid(alpha=0.3, which="both")
plt.show()

# %% [markdown]
# On a log scale the curves are straight lines: exponential decay or growth. With $\rho = 0.9$, after
# 100 steps the gradient has shrunk to $0.9^{100}$ if every step shrank it by exactly $\rho$; the typical
# (median) random product in the plot shrinks several times more than that (the cell below prints both and
# the ratio). The reason: $\rho$ is the *root-mean-square* stretch per step, and a few lucky large
# stretches raise that average, while a typical chain of steps is stretched less. Either way the word
# 100 positions back receives essentially no learning signal. Even $\rho = 1$ drifts downwards. Gates (LSTM, GRU), careful initialisation and
# gradient clipping soften this, but they do not shorten the path.
#
# %%
typical = jacobian_product_norms(0.9, 100)[-1]  # the median product of the plot, after 100 steps
print(f"ρ = 0.9, 100 steps: ρ^100 = {0.9**100:.1e}, typical random product = {typical:.1e} "
      f"({0.9**100 / typical:.1f}x smaller than ρ^100)")
assert 0.9**100 / typical > 2  # "several times more" in the text above

# %% [markdown]
# An attention layer puts **one** Jacobian between any two positions, so the gradient does not have to
# survive a chain. Let us measure it on real (small, untrained, random) layers: how large is the
# gradient of the output at the last of 64 positions with respect to each input, as a function of
# how far back the input is?
#
# * a **tanh RNN**, $h_t = \tanh(W h_{t-1} + x_t)$ with $\rho(W) \approx 0.9$, read out at $h_{64}$;
# * one **attention** layer from `attnlab`, whose last position queries all 64 inputs.
#
# Each curve is the median over 32 random sequences.

# %%
B_seq, L_seq, d_seq = 32, 64, 16
gen = torch.Generator().manual_seed(2)
x_seq = torch.randn(B_seq, L_seq, d_seq, generator=gen, requires_grad=True)   # (B, L, d)

W_rnn = torch.randn(d_seq, d_seq, generator=gen) * 0.9 / math.sqrt(d_seq)     # recurrent weights, ρ ≈ 0.9
h = torch.zeros(B_seq, d_seq)
for t in range(L_seq):
    h = torch.tanh(h @ W_rnn.T + x_seq[:, t])                                  # (B, d)
rnn_grad = torch.autograd.grad(h.sum(), x_seq)[0].norm(dim=-1)                 # (B, L)

query_last = torch.randn(B_seq, 1, d_seq, generator=gen)                      # (B, 1, d) the last position's query
attn_out, _ = scaled_dot_product_attention(query_last, x_seq, x_seq)          # (B, 1, d)
attn_grad = torch.autograd.grad(attn_out.sum(), x_seq)[0].norm(dim=-1)         # (B, L)

# %%
back = np.arange(L_seq - 1, -1, -1)           # how many positions before the last one each input is
fig, ax = plt.subplots(figsize=(7.5, 4.2))
ax.plot(back, rnn_grad.median(dim=0).values.numpy(), lw=2, label="tanh RNN (64 chained steps)")
ax.plot(back, attn_grad.median(dim=0).values.numpy(), lw=2, label="one attention layer")
ax.set_yscale("log")
ax.set_xlabel("distance from the last position (positions back)")
ax.set_ylabel("gradient size at the input  ‖∂ output / ∂ x_j‖")
ax.set_title("How much learning signal reaches a word n positions back?")
ax.legend()
ax.grid(alpha=0.3, which="both")
plt.show()

# %% [markdown]
# The RNN's curve is a straight line down on the log scale: every extra step of distance costs a
# constant factor. The attention curve is flat: how much gradient an input receives depends on how
# much the query attends to it (its content), not on where it is. That is the point of this lesson:
# **in attention, relevance decides who talks to whom, not position.**
#
# ## 4 · Attention as a soft dictionary lookup
#
# A Python `dict` is a **hard lookup**: give it a key, it returns the one matching value. Exact match
# or nothing.

# %%
memory = {"keys": "plural", "cabinet": "singular", "door": "singular"}
print(memory["keys"])
print("key" in memory, "  <- a near miss finds nothing")

# %% [markdown]
# A neural network cannot use this directly, for two reasons: its "keys" are vectors that never match
# exactly, and a hard choice has no gradient, so the network cannot learn *which* key to pick.
#
# Attention replaces the hard choice with a soft one. Each stored item $j$ has a **key** $k_j$ and a
# **value** $v_j$. A **query** $q$ is compared with every key by a score $s_j = q \cdot k_j$, the scores
# become weights with a softmax, and the output is the weighted average of the values:
#
# $$
# a_j = \frac{e^{s_j}}{\sum_t e^{s_t}}, \qquad
# a_j \ge 0, \qquad \sum_j a_j = 1, \qquad
# \text{output} = \sum_j a_j\, v_j .
# $$
#
# Because the weights are non-negative and sum to one, the output is a **convex combination** of the
# values: it always lies inside their convex hull (for 1-D values: between the smallest and the largest
# value). If one score is much larger than the others, the weights approach a one-hot vector and the
# lookup becomes hard again, but it stays differentiable at every step.

# %% [markdown]
# ### Worked example: three queries, three keys, one-dimensional values
#
# Take $d_k = 1$ (so the $\sqrt{d_k}$ of lesson 02 equals 1 and changes nothing):
#
# $$
# Q = \begin{bmatrix}2\\0\\1\end{bmatrix},\quad
# K = \begin{bmatrix}1\\3\\-1\end{bmatrix},\quad
# V = \begin{bmatrix}10\\20\\30\end{bmatrix}.
# $$
#
# **Scores.** $S_{ij} = q_i k_j$, so $S = QK^\top = \begin{bmatrix}2 & 6 & -2\\ 0 & 0 & 0\\ 1 & 3 & -1\end{bmatrix}$.
#
# **Weights.** A softmax on each row. Row 2 is all zeros, so it is uniform: $[\tfrac13, \tfrac13, \tfrac13]$.
# Row 1 is $[e^2, e^6, e^{-2}] / (e^2 + e^6 + e^{-2}) \approx [0.018, 0.982, 0.000]$: query 1 almost
# ignores keys 1 and 3.
#
# **Outputs.** $o_i = \sum_j A_{ij} v_j$, so $o_2 = (10 + 20 + 30)/3 = 20$ and $o_1 \approx 19.8$, just
# below the value of the key it favours.
#
# Now the same steps in code, one line each:

# %%
Q = torch.tensor([[2.0], [0.0], [1.0]])    # (L=3, d_k=1)
K = torch.tensor([[1.0], [3.0], [-1.0]])   # (S=3, d_k=1)
V = torch.tensor([[10.0], [20.0], [30.0]]) # (S=3, d_v=1)

S_by_hand = Q @ K.T + 0.0                  # (3, 3) scores (+0.0 only turns a printed -0. into 0.)
A_by_hand = torch.softmax(S_by_hand, dim=-1)  # (3, 3) each row sums to 1
O_by_hand = A_by_hand @ V                  # (3, 1) convex combinations of the values
print("S =\n", S_by_hand)
print("A =\n", A_by_hand.numpy().round(4))
print("O =\n", O_by_hand.numpy().round(3))

# %% [markdown]
# The library's `scaled_dot_product_attention` must agree (with $d_k = 1$ its scaling is a division by 1):

# %%
O_lib, A_lib = scaled_dot_product_attention(Q, K, V)
torch.testing.assert_close(A_lib, A_by_hand)
torch.testing.assert_close(O_lib, O_by_hand)
print("library matches the hand computation; rows of A sum to", A_lib.sum(dim=-1).numpy().round(4))
print("every output lies between min(V) = 10 and max(V) = 30:", bool(((O_lib >= 10) & (O_lib <= 30)).all()))

# %% [markdown]
# ### Hard lookup has no gradient; soft lookup does
#
# Suppose the training signal says "output 1 should have been larger". With a soft lookup the gradient
# tells the query how to move. With a hard lookup (take the value of the best-scoring key) the output
# does not depend smoothly on the query at all: nudging $q$ changes nothing until the winner suddenly
# flips, so the gradient is zero almost everywhere.

# %%
q = torch.tensor([[1.0]], requires_grad=True)                  # one query, d_k = 1
soft_out, _ = scaled_dot_product_attention(q, K, V)
soft_out.sum().backward()
print(f"soft lookup: output {soft_out.item():.3f}, d(output)/dq = {q.grad.item():+.3f}")

hard_out = V[(q @ K.T).argmax(dim=-1)]                         # value of the best key
print(f"hard lookup: output {hard_out.item():.3f}, depends on q through the graph? {hard_out.requires_grad}")

# %% [markdown]
# ### Try it: move the query, watch the lookup
#
# Four items live in a 2-D plane. Each has a **key** (an arrow on the unit circle, left panel) and a
# **value** (a coloured point, middle panel). You control the **query**: its *direction* and its
# *length*. A longer query multiplies every score, which works exactly like lowering the softmax
# temperature.
#
# * The middle panel shows the convex hull of the values (grey), the **soft** output (black star) and the
#   **hard** output (the value of the single best key, circled).
# * The right panel shows the four weights.
#
# Things to try: make the query long (sharp) and sweep the direction: the star jumps between corners,
# like a hard lookup. Make it short (soft): the star drifts towards the centre of the hull. Can you ever
# push the star outside the grey region?

# %%
key_angles = torch.tensor([20.0, 110.0, 200.0, 290.0])
keys2d = torch.stack([torch.cos(torch.deg2rad(key_angles)), torch.sin(torch.deg2rad(key_angles))], dim=-1)  # (4, 2)
values2d = torch.tensor([[3.0, 1.0], [1.0, 3.5], [-2.5, 0.5], [0.0, -2.0]])                                  # (4, 2)
item_colours = ["tab:blue", "tab:orange", "tab:green", "tab:purple"]


def show_lookup(direction=40.0, length=3.0):
    theta = math.radians(direction)
    query = length * torch.tensor([[math.cos(theta), math.sin(theta)]])          # (1, 2)
    out, weights = scaled_dot_product_attention(query, keys2d, values2d)         # (1, 2), (1, 4)
    w = weights[0]
    hard = values2d[w.argmax()]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))

    ax = axes[0]
    ax.add_patch(plt.Circle((0, 0), 1, fill=False, color="0.8"))
    for j in range(4):
        ax.annotate("", xy=keys2d[j].tolist(), xytext=(0, 0),
                    arrowprops=dict(arrowstyle="-|>", color=item_colours[j], lw=2))
        ax.text(*(1.18 * keys2d[j]).tolist(), f"k{j + 1}", color=item_colours[j], ha="center", va="center")
    tip = (query[0] / max(length, 1e-9) * min(length, 1.6)).tolist()
    ax.annotate("", xy=tip, xytext=(0, 0), arrowprops=dict(arrowstyle="-|>", color="black", lw=2.5))
    ax.text(tip[0] * 1.12, tip[1] * 1.12, "q", fontsize=12, weight="bold")
    ax.set_xlim(-1.8, 1.8); ax.set_ylim(-1.8, 1.8); ax.set_aspect("equal")
    ax.set_title(f"keys and query (length {length:.1f})")

    ax = axes[1]
    ax.add_patch(Polygon(values2d.numpy(), closed=True, facecolor="0.9", edgecolor="0.6"))
    for j in range(4):
        ax.scatter(*values2d[j].tolist(), s=120, color=item_colours[j], zorder=3)
        ax.text(values2d[j, 0] + 0.2, values2d[j, 1] + 0.2, f"v{j + 1}", color=item_colours[j])
    ax.scatter(*hard.tolist(), s=420, facecolor="none", edgecolor="black", lw=1.5, zorder=4, label="hard lookup")
    ax.scatter(*out[0].tolist(), marker="*", s=320, color="black", zorder=5, label="soft lookup  Σ a_j v_j")
    ax.set_xlim(-3.5, 4); ax.set_ylim(-3, 4.5); ax.set_aspect("equal")
    ax.legend(loc="lower left", fontsize=8, markerscale=0.5)
    ax.set_title("values, their convex hull, and the output")

    ax = axes[2]
    ax.bar(range(4), w.numpy(), color=item_colours)
    for j in range(4):
        ax.text(j, w[j].item() + 0.02, f"{w[j].item():.2f}", ha="center")
    ax.set_xticks(range(4), [f"a{j + 1}" for j in range(4)])
    ax.set_ylim(0, 1.1)
    ax.set_title(f"weights (sum = {w.sum().item():.2f})")
    fig.tight_layout()
    plt.show()


widgets.interact(
    show_lookup,
    direction=widgets.FloatSlider(value=40.0, min=0.0, max=360.0, step=5.0, description="query angle (°)",
                                  style={"description_width": "initial"}),
    length=widgets.FloatSlider(value=3.0, min=0.0, max=12.0, step=0.25, description="query length (sharpness)",
                               style={"description_width": "initial"}),
);

# %% [markdown]
# What you should have seen:
#
# * **length 0**: all scores are 0, the weights are uniform ($\tfrac14$ each) and the output is the plain
#   average of the values, whatever the direction;
# * **large length**: the weights become nearly one-hot and the star sits on the circled value: soft lookup
#   turns into hard lookup;
# * **always**: the weights are non-negative and sum to 1, so the star never leaves the grey hull.

# %% [markdown]
# ### Back to the trap
#
# Here is the agreement trap solved with exactly this lookup. We give each word a 2-D key with two
# features that an earlier layer could plausibly compute: *is a noun* and *is not inside a
# prepositional phrase*. The blank's query asks for both. The value is the number feature from before.
# These vectors are hand-made for illustration; in a real model, the query and key projections are
# learned (lesson 02).

# %%
is_noun =       torch.tensor([0., 1., 0., 0., 1., 0., 0., 1.])
outside_pp =    torch.tensor([1., 1., 0., 0., 0., 0., 0., 0.])
word_keys = torch.stack([is_noun, outside_pp], dim=-1)       # (S=8, d_k=2)
word_values = number[:, None]                                # (S=8, d_v=1)
blank_query = torch.tensor([[4.0, 4.0]])                     # (L=1, d_k=2) "a noun, outside any phrase"
agreement, w_blank = scaled_dot_product_attention(blank_query, word_keys, word_values)
for word, weight in zip(tokens[:-1], w_blank[0]):
    print(f"{word:>8s}  {weight:.3f}  " + "█" * int(40 * weight))
print(f"summary = {agreement.item():+.3f}  ->  predicts '{'are' if agreement.item() > 0 else 'is'}'")

# %% [markdown]
# Distance played no role: *keys* won because its key matched the query best. If the sentence were twice
# as long, the computation would be the same single step.
#
# One honest caveat: this one step is not free. To let every position look at every other, a layer
# compares all pairs, $L \times L$ scores for a sequence of length $L$. Lesson 02 computes this score
# matrix, and lesson 10 measures what it costs.

# %% [markdown]
# ### Where attention came from: the bottleneck of seq2seq and additive attention
#
# Attention did not start with the Transformer. In 2014 translation models were **encoder–decoder RNNs** (Sutskever et
# al.; Cho et al.): an encoder RNN read the source sentence and its **last hidden state**, one fixed-length vector, was
# all the decoder got to see. Everything about a 40-word sentence had to squeeze through that one vector, and translation
# quality fell off for long sentences. Bahdanau, Cho and Bengio (2015) removed the bottleneck: at every output step $i$
# the decoder looks at **all** encoder states $h_1 \dots h_S$, scores each against its own state $s_{i-1}$ with a small
# neural network, and takes a softmax-weighted average, exactly the soft lookup of this section:
#
# $$ e_{ij} = v^\top \tanh\!\big(W s_{i-1} + U h_j\big), \qquad \alpha_{ij} = \operatorname{softmax}_j(e_{ij}),
#    \qquad c_i = \sum_j \alpha_{ij} h_j . $$
#
# This is **additive** attention (the query and key are added inside a $\tanh$). Luong et al. (2015) tried simpler
# scores such as the **dot product** $s^\top h_j$, and the Transformer kept the dot product, scaled by $1/\sqrt{d_k}$
# (lesson 02), because a whole matrix of dot products is one fast matrix multiplication. So the score function is a
# design choice; what makes it attention is the rest: scores → softmax → weighted average of values.
#
# Both score functions on the same three keys (random small weights; only the shape of the computation matters):

# %%
gen = torch.Generator().manual_seed(5)
d_att, d_hidden = 2, 4
W_add = torch.randn(d_hidden, d_att, generator=gen)   # applied to the query (decoder state)
U_add = torch.randn(d_hidden, d_att, generator=gen)   # applied to the keys (encoder states)
v_add = torch.randn(d_hidden, generator=gen)
q_add = torch.tensor([1.0, 0.5])                       # (d,) one query
keys_add = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])   # (S=3, d)
values_add = torch.tensor([[10.0], [20.0], [30.0]])               # (S=3, 1)

additive_scores = torch.tanh(q_add @ W_add.T + keys_add @ U_add.T) @ v_add   # (S,) v·tanh(Wq + Uk_j)
dot_scores = keys_add @ q_add                                                # (S,) q·k_j
for name, scores in (("additive (Bahdanau)", additive_scores), ("dot product (Luong)", dot_scores)):
    weights = torch.softmax(scores, dim=-1)
    out = weights @ values_add
    assert torch.isclose(weights.sum(), torch.tensor(1.0)) and 10 <= out.item() <= 30  # same lookup either way
    print(f"{name:>20s}: scores {scores.numpy().round(2)}, weights {weights.numpy().round(2)}, output {out.item():.2f}")

# %% [markdown]
# Different scores, so different weights; but both are soft lookups whose output stays between the smallest and largest
# value. A common mistake is to think attention *is* the dot product, or that it was invented for the Transformer; the
# Transformer's contribution was to drop the recurrence and use (self-)attention everywhere.

# %% [markdown]
# ## 5 · Common mistakes
#
# **1. "The nearest word is the most relevant."** The agreement trap shows it is not: the recency summary
# above predicted *is*. Relevance must be computed from content.
#
# **2. Using raw scores as weights.** Without the softmax the "weights" can be negative and need not
# sum to 1, so the output can leave the hull of the values. With the worked example, row 1 becomes
# $2\cdot10 + 6\cdot20 - 2\cdot30 = 80$, far outside $[10, 30]$.
#
# **3. Normalising over the wrong axis.** `softmax(dim=0)` makes each **key's** column sum to 1 instead
# of each **query's** row. A query's weights then no longer sum to 1, so its output is not an average
# any more. The clearest symptom: if every value is 10, any average must return 10, but this does not.
#
# **4. Taking the argmax.** A hard lookup gives the right answer only when the scores are already right,
# and gives no gradient to make them right (section 4).
#
# Mistakes 2 and 3, in numbers on the worked example (correct answer: every output in $[10, 30]$):

# %%
O_raw = S_by_hand @ V                                      # mistake 2: no softmax
O_wrong_axis = torch.softmax(S_by_hand, dim=0) @ V         # mistake 3: columns normalised
print("correct       :", O_by_hand.squeeze().numpy().round(2))
print("raw scores    :", O_raw.squeeze().numpy().round(2), " <- outside [10, 30]")
print("dim=0 softmax :", O_wrong_axis.squeeze().numpy().round(2), "   row sums of A:",
      torch.softmax(S_by_hand, dim=0).sum(dim=-1).numpy().round(2))
all_tens = torch.full((3, 1), 10.0)
print("values all 10, correct :", (torch.softmax(S_by_hand, dim=-1) @ all_tens).squeeze().numpy().round(2))
print("values all 10, dim=0   :", (torch.softmax(S_by_hand, dim=0) @ all_tens).squeeze().numpy().round(2), " <- not 10")

# %% [markdown]
# ## 6 · Practice
#
# Try these on paper, then check with a line of code of your own.
#
# 1. An RNN must relate positions 3 and 503. How many recurrent steps lie between them? How many layers
#    does a stack of kernel-5 convolutions need? A dilated stack with $k = 2$? An attention layer?
# 2. The Jacobians along a path have $\rho = 0.95$. Roughly how much of the gradient survives 50 steps?
# 3. In the worked example, change $q_2$ from $0$ to $-1$. Without computing exactly: does $o_2$ go up or
#    down? (Hint: which key now gets the largest score?)
# 4. Attention weights for one query are $[0.2, 0.5, 0.3]$ and the 1-D values are $[4, -2, 10]$. Compute
#    the output. Is it between $-2$ and $10$?
#
# <details><summary><b>Answers</b> (click to open)</summary>
#
# 1. The distance is 500. RNN: 500 steps. Kernel 5 adds 4 positions of reach per layer: $\lceil 500/4 \rceil = 125$
#    layers. Dilated, $k = 2$: $\lceil \log_2 501 \rceil = 9$ layers. Attention: 1 layer.
# 2. $0.95^{50} \approx 0.08$: about 8% survives (and $0.95^{200} \approx 0.00004$).
# 3. The scores of row 2 become $[-1, -3, 1]$, so key 3 (value 30) now wins and $o_2$ goes **up**, from 20 to
#    about 27.5.
# 4. $0.2 \cdot 4 + 0.5 \cdot (-2) + 0.3 \cdot 10 = 2.8$. Yes: a convex combination always lies between the
#    smallest and the largest value.
#
# </details>
#
# The mastery check below gives you fresh versions of these problems with instant feedback and hints.

# %% [markdown]
# ## Mastery check

# %%
from attnlab.practice import mastery_check

mastery_check("01")

# %% [markdown]
# **Next:** the exercise `exercises/01_routing_and_soft_lookup/`, then lesson 02, where the query, key and
# value vectors become learned projections and we find out why the scores are divided by $\sqrt{d_k}$.
