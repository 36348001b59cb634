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

gate("02")

# %% [markdown]
# # Lesson 02 · Scaled dot-product attention
#
# Lesson 01 built attention as a soft lookup: compare a query with every key, turn the scores into
# weights with a softmax, and average the values. This lesson makes it precise. It is the equation at
# the heart of every Transformer (Vaswani et al., 2017, Eq. 1):
#
# $$
# \operatorname{Attention}(Q, K, V) \;=\; \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V .
# $$
#
# **You will be able to:** say where $Q$, $K$ and $V$ come from and what shape each has; compute
# attention by hand for a small example; explain, with a measurement, why the scores are divided by
# $\sqrt{d_k}$; recognise the four classic bugs from their numbers; and state the $L \times L$ cost.

# %%
# %matplotlib inline
import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import display

from attnlab.fast.timing import claim, paired_ratio
from attnlab.nn import scaled_dot_product_attention
from attnlab.settings import course_settings
from attnlab.viz import attention_heatmap

torch.manual_seed(0)
torch.set_printoptions(precision=4, sci_mode=False)
np.set_printoptions(precision=2, suppress=True)
plt.rcParams["figure.dpi"] = 100
QUICK = course_settings().ci   # smaller measurements when the notebook runs in CI

# %% [markdown]
# ## 1 · Queries, keys and values are learned projections
#
# Start from a sequence of $L$ token vectors stacked as rows of $X \in \mathbb{R}^{L \times d_\text{model}}$.
# Three learned matrices give each token three different roles:
#
# $$
# Q = X W_Q,\qquad K = X W_K,\qquad V = X W_V,\qquad
# W_Q, W_K \in \mathbb{R}^{d_\text{model} \times d_k},\; W_V \in \mathbb{R}^{d_\text{model} \times d_v}.
# $$
#
# * a **query** row $q_i$: what position $i$ is looking for;
# * a **key** row $k_j$: how position $j$ advertises itself to be found;
# * a **value** row $v_j$: what position $j$ hands over when it is found.
#
# Queries and keys are compared by dot products, so they must share the width $d_k$. Values are only
# averaged, so their width $d_v$ is free (in practice usually $d_v = d_k$).
#
# In PyTorch each projection is an `nn.Linear(d_model, d_k, bias=False)`. Note that `nn.Linear` stores
# its weight as `(out, in)` and computes $X W^\top$; the maths is the same.

# %%
sentence = ["the", "keys", "to", "the", "cabinet", "are"]
L, d_model, d_k, d_v = len(sentence), 16, 4, 4

X = torch.randn(L, d_model)                           # (L, d_model) token vectors
w_q = torch.nn.Linear(d_model, d_k, bias=False)
w_k = torch.nn.Linear(d_model, d_k, bias=False)
w_v = torch.nn.Linear(d_model, d_v, bias=False)
Q, K, V = w_q(X), w_k(X), w_v(X)                       # (L, d_k), (L, d_k), (L, d_v)
print("X", tuple(X.shape), "->  Q", tuple(Q.shape), " K", tuple(K.shape), " V", tuple(V.shape))

# %% [markdown]
# Here $W_Q, W_K, W_V$ are random (untrained), so the attention pattern they produce means nothing yet.
# Training adjusts them until queries find the keys that are useful, for example a verb's query
# finding its subject's key.
#
# ## 2 · The computation in four steps
#
# For one sequence, with $Q \in \mathbb{R}^{L \times d_k}$, $K \in \mathbb{R}^{S \times d_k}$,
# $V \in \mathbb{R}^{S \times d_v}$:
#
# | Step | Formula | Shape |
# |---|---|---|
# | 1. scores | $S_{ij} = q_i \cdot k_j$, i.e. $QK^\top$ | $L \times S$ |
# | 2. scale | $\tilde S = S / \sqrt{d_k}$ | $L \times S$ |
# | 3. softmax **along each row** | $A_{ij} = e^{\tilde S_{ij}} / \sum_{t} e^{\tilde S_{it}}$ | $L \times S$, rows sum to 1 |
# | 4. mix values | $O = A V$, so $o_i = \sum_j A_{ij} v_j$ | $L \times d_v$ |
#
# Row $i$ of $A$ is a probability distribution over the $S$ keys: how much query $i$ takes from each
# position. Row $i$ of $O$ is the matching weighted average of the value rows.

# %% [markdown]
# The same four steps as a picture (the optional mask step `+ M` is explained at the end of section 5
# and in lesson 03). Follow the shapes: the score matrix is $L \times S$, one row per query.

# %%
from attnlab.diagrams import sdpa_flow

sdpa_flow()
plt.show()

# %% [markdown]
# ## 3 · Worked example, by hand
#
# Two tokens, $d_k = d_v = 2$, no mask:
#
# $$
# Q = \begin{bmatrix}1 & 0\\ 0 & 1\end{bmatrix},\quad
# K = \begin{bmatrix}1 & 0\\ 1 & 1\end{bmatrix},\quad
# V = \begin{bmatrix}1 & 2\\ 3 & 4\end{bmatrix}.
# $$
#
# **Step 1, scores.** $K^\top = \begin{bmatrix}1 & 1\\ 0 & 1\end{bmatrix}$, so
# $QK^\top = \begin{bmatrix}1 & 1\\ 0 & 1\end{bmatrix}$. Query 1 matches both keys equally; query 2
# matches only key 2.
#
# **Step 2, scale.** $\sqrt{d_k} = \sqrt 2$, so $\tilde S \approx \begin{bmatrix}0.707 & 0.707\\ 0 & 0.707\end{bmatrix}$.
#
# **Step 3, softmax per row.** Row 1 has two equal scores: $[0.5, 0.5]$. Row 2:
# $e^0 = 1$, $e^{0.707} \approx 2.028$, total $3.028$, so $[0.330, 0.670]$.
#
# **Step 4, mix.** $o_1 = 0.5\,[1, 2] + 0.5\,[3, 4] = [2, 3]$ and
# $o_2 = 0.330\,[1, 2] + 0.670\,[3, 4] \approx [2.34, 3.34]$.
#
# $$
# O \approx \begin{bmatrix}2.00 & 3.00\\ 2.34 & 3.34\end{bmatrix}
# $$
#
# Token 2 leans towards value 2 because its query points the same way as key 2.
# Now each step in code:

# %%
Q2 = torch.tensor([[1.0, 0.0], [0.0, 1.0]])    # (L=2, d_k=2)
K2 = torch.tensor([[1.0, 0.0], [1.0, 1.0]])    # (S=2, d_k=2)
V2 = torch.tensor([[1.0, 2.0], [3.0, 4.0]])    # (S=2, d_v=2)

scores2 = Q2 @ K2.T                            # step 1: (2, 2)
scaled2 = scores2 / math.sqrt(2)               # step 2
A2 = torch.softmax(scaled2, dim=-1)            # step 3: each row sums to 1
O2 = A2 @ V2                                   # step 4: (2, 2)
print("scores:\n", scores2, "\nscaled:\n", scaled2, "\nweights A:\n", A2, "\noutput O:\n", O2)

# %% [markdown]
# The library function returns both the output and the weights. It must reproduce the hand computation,
# and the rounded numbers above:

# %%
O_lib, A_lib = scaled_dot_product_attention(Q2, K2, V2)
torch.testing.assert_close(A_lib, A2)
torch.testing.assert_close(O_lib, O2)
torch.testing.assert_close(O_lib, torch.tensor([[2.00, 3.00], [2.34, 3.34]]), atol=5e-3, rtol=0)
print("attnlab agrees:  O =\n", O_lib.numpy())

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
attention_heatmap(A_lib, ["query 1", "query 2"], ["key 1", "key 2"], title="weights A (rows sum to 1)", ax=axes[0])
axes[1].scatter(*V2.T.numpy(), s=150, c=["tab:blue", "tab:orange"], zorder=3)
axes[1].plot(*V2.T.numpy(), color="0.7", zorder=1)
axes[1].scatter(*O_lib.T.numpy(), marker="*", s=260, c="black", zorder=4)
for name, point, offset in [("v1", V2[0], (0.08, -0.15)), ("v2", V2[1], (0.08, -0.15)),
                            ("o1", O_lib[0], (-0.25, 0.12)), ("o2", O_lib[1], (0.08, -0.2))]:
    axes[1].text(point[0] + offset[0], point[1] + offset[1], name, fontsize=11)
axes[1].set_title("outputs lie on the segment between the values")
axes[1].set_xlabel("feature 1"); axes[1].set_ylabel("feature 2")
axes[1].set_aspect("equal"); axes[1].set_xlim(0.5, 3.8); axes[1].set_ylim(1.5, 4.5)
fig.tight_layout()
plt.show()


# %% [markdown]
# ## 4 · Why divide by $\sqrt{d_k}$?
#
# Suppose, as at initialisation, that the entries of a query $q$ and a key $k$ are independent with
# mean 0 and variance 1. Then each product $q_c k_c$ has mean 0 and variance
# $\mathbb{E}[q_c^2]\,\mathbb{E}[k_c^2] = 1$, and the dot product adds $d_k$ of them:
#
# $$
# \operatorname{Var}(q \cdot k) = \sum_{c=1}^{d_k} \operatorname{Var}(q_c k_c) = d_k,
# \qquad
# \operatorname{Var}\!\left(\frac{q \cdot k}{\sqrt{d_k}}\right) = 1 .
# $$
#
# So raw scores spread out like $\sqrt{d_k}$ even when nothing is relevant. That matters because the
# softmax is scale-sensitive (lesson 00's temperature): large scores make it nearly one-hot, and a
# nearly one-hot softmax has a **small gradient**. Its Jacobian is
#
# $$
# \frac{\partial a}{\partial z} = \operatorname{diag}(a) - a a^\top ,
# $$
#
# which shrinks as $a$ approaches a one-hot vector (and vanishes at one): the model learns ever more
# slowly to move its attention.
# Dividing by $\sqrt{d_k}$ keeps the scores at unit variance for every $d_k$.
#
# Before measuring, a check that the closed-form Jacobian is right, against autograd:

# %%
def softmax_jacobian(a):
    """Jacobian of softmax at output a: diag(a) - a aᵀ.  a: (S,)  ->  (S, S)."""
    return torch.diag(a) - torch.outer(a, a)


z = torch.randn(5, dtype=torch.float64)
torch.testing.assert_close(softmax_jacobian(torch.softmax(z, dim=-1)),
                           torch.autograd.functional.jacobian(lambda t: torch.softmax(t, dim=-1), z))
print("closed-form softmax Jacobian matches autograd")

# %% [markdown]
# Now the experiment: for each $d_k$ from 1 to 1024, draw random unit-variance queries and keys
# (16 keys per query), and measure three things with and without the scaling: the variance of the
# scores, the largest attention weight in each row, and the size of the softmax Jacobian.

# %%
dims = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
n_queries, n_keys = (128 if QUICK else 512), 16
gen = torch.Generator().manual_seed(0)
results = {"raw": {"var": [], "max_w": [], "jac": []}, "scaled": {"var": [], "max_w": [], "jac": []}}
for d in dims:
    q = torch.randn(n_queries, 1, d, generator=gen)                  # (N, 1, d_k)
    k = torch.randn(n_queries, n_keys, d, generator=gen)             # (N, S, d_k) fresh keys per query
    raw = (q @ k.transpose(-2, -1)).squeeze(1)                       # (N, S) raw scores
    for name, logits in (("raw", raw), ("scaled", raw / math.sqrt(d))):
        a = torch.softmax(logits, dim=-1)                            # (N, S)
        jac = torch.diag_embed(a) - a[:, :, None] * a[:, None, :]    # (N, S, S) diag(a) - a aᵀ per row
        results[name]["var"].append(logits.var().item())
        results[name]["max_w"].append(a.max(dim=-1).values.mean().item())
        results[name]["jac"].append(torch.linalg.matrix_norm(jac).mean().item())

# %% [markdown]
# The library's attention applies exactly this scaling; check one case from the experiment:

# %%
_, w_check = scaled_dot_product_attention(q, k, k)
torch.testing.assert_close(w_check.squeeze(1), torch.softmax(raw / math.sqrt(dims[-1]), dim=-1))

# %%
fig, axes = plt.subplots(1, 3, figsize=(14, 4))
styles = {"raw": dict(color="tab:red", marker="o", label="raw  q·k"),
          "scaled": dict(color="tab:blue", marker="s", label="scaled  q·k / √d_k")}
panels = [("var", "variance of the scores", "log"),
          ("max_w", "largest weight in a row (mean)", "linear"),
          ("jac", "softmax Jacobian size ‖diag(a) − aaᵀ‖", "log")]
for ax, (key, ylabel, yscale) in zip(axes, panels):
    for name in ("raw", "scaled"):
        ax.plot(dims, results[name][key], lw=2, **styles[name])
    ax.set_xscale("log", base=2)
    ax.set_yscale(yscale)
    ax.set_xlabel("d_k")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, which="both")
axes[0].plot(dims, dims, color="0.5", ls=":", label="d_k (theory)")
axes[1].axhline(1 / n_keys, color="0.5", ls=":", label=f"uniform 1/{n_keys}")
axes[1].set_ylim(0, 1.05)
jac_drop = results["scaled"]["jac"][-1] / results["raw"]["jac"][-1]  # how much smaller without scaling
axes[0].set_title("1. raw score variance grows like d_k")
axes[1].set_title("2. so the softmax saturates (one-hot)")
axes[2].set_title(f"3. and its gradient shrinks (÷{jac_drop:.1f} at d_k = {dims[-1]})")
for ax in axes[:2]:
    ax.legend(fontsize=9)
axes[2].legend(fontsize=9, loc="lower left")
fig.tight_layout()
plt.show()

# %%
i64 = dims.index(64)
print(f"at d_k = 64: score variance raw {results['raw']['var'][i64]:.1f} vs scaled {results['scaled']['var'][i64]:.2f};"
      f" max weight raw {results['raw']['max_w'][i64]:.2f} vs scaled {results['scaled']['max_w'][i64]:.2f};"
      f" Jacobian raw {results['raw']['jac'][i64]:.3f} vs scaled {results['scaled']['jac'][i64]:.3f}")
print(f"at d_k = {dims[-1]}: the raw Jacobian is {jac_drop:.1f}x smaller than the scaled one")
assert results["raw"]["max_w"][i64] > 0.5  # "the top key takes most of the weight" (below)
assert all(abs(v - d) < 0.25 * d for v, d in zip(results["raw"]["var"], dims))  # "variance = d_k" (below)

# %% [markdown]
# Read the three panels left to right:
#
# 1. without scaling, the score variance equals $d_k$ (the dotted line), so the scores' *spread*
#    (standard deviation) grows like $\sqrt{d_k}$; with scaling the variance stays at 1;
# 2. without scaling, by $d_k = 64$ (a typical head width) the top key already takes most of the weight in
#    an average row, on random vectors where no key is actually more relevant than another;
# 3. the softmax gradient shrinks accordingly, by the factor printed above at $d_k = 1024$. It does not
#    vanish at these sizes (a row of 16 random keys is rarely exactly one-hot), but it keeps shrinking as
#    the scores grow, and during training the scores can grow much larger than at initialisation.
#    Scaled attention keeps the gradient constant in $d_k$.
#
# The fix is cheap (one division) and it means a wider head does not silently train worse.
#
# Quick practice with fresh numbers each time (type the answer, press *Check*; *Hint* if stuck):

# %%
from attnlab.practice import practice

practice("sdpa_scale")


# %% [markdown]
# ## 5 · The whole thing, batched
#
# Real models process a batch of $B$ sequences and $H$ heads at once. Nothing changes: `@` treats every
# leading axis as a batch axis, `transpose(-2, -1)` swaps only the last two, and `softmax(dim=-1)` normalises
# each query's row. Here is the formula in four lines, checked against the library:

# %%
def attention_four_lines(q, k, v):
    """softmax(q kᵀ / √d_k) v.   q: (..., L, d_k), k: (..., S, d_k), v: (..., S, d_v)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])   # (..., L, S)
    weights = scores.softmax(dim=-1)                            # (..., L, S) rows sum to 1
    return weights @ v, weights                                 # (..., L, d_v), (..., L, S)


B, H, L_b, S_b = 2, 3, 5, 7
q, k, v = torch.randn(B, H, L_b, 8), torch.randn(B, H, S_b, 8), torch.randn(B, H, S_b, 6)
mine, mine_w = attention_four_lines(q, k, v)
ref, ref_w = scaled_dot_product_attention(q, k, v)
torch.testing.assert_close(mine, ref)
torch.testing.assert_close(mine_w, ref_w)
print("output", tuple(ref.shape), " weights", tuple(ref_w.shape), " rows sum to 1:",
      torch.allclose(ref_w.sum(-1), torch.ones(B, H, L_b)))

# %% [markdown]
# ### Two optional arguments: `mask` and `dropout_p`
#
# The full signature is `scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0)`. You will
# implement both arguments in exercise 02, so here is what they do.
#
# **`mask`: who may look at whom.** A **boolean** tensor that broadcasts to $(\dots, L, S)$;
# `True` means *query $i$ may attend key $j$* (the course's one convention, the same as PyTorch's
# `F.scaled_dot_product_attention`). Where it is `False`, the scaled score is replaced by $-\infty$
# **before** the softmax. Since $e^{-\infty} = 0$, that weight is exactly 0 and the allowed weights of
# the row still sum to 1:
#
# $$ A = \operatorname{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}} + M\Big), \qquad
#    M_{ij} = \begin{cases} 0 & \text{mask}_{ij} = \texttt{True} \\ -\infty & \text{mask}_{ij} = \texttt{False.} \end{cases} $$
#
# *Worked example.* In the two-token example, forbid query 1 to look at key 2. Its row becomes
# $\operatorname{softmax}([0.707, -\infty]) = [1, 0]$, so $o_1 = v_1 = [1, 2]$; query 2 is unchanged.
# Lesson 03 is about *which* masks a model needs (causal, padding, and their combination); the
# mechanics are only this.

# %%
allow2 = torch.tensor([[True, False], [True, True]])                    # (L, S): query 1 may not see key 2
by_hand_masked = torch.softmax((Q2 @ K2.T / math.sqrt(2)).masked_fill(~allow2, float("-inf")), dim=-1)
out_m, w_m = scaled_dot_product_attention(Q2, K2, V2, mask=allow2)
torch.testing.assert_close(w_m, by_hand_masked)
assert w_m[0, 1].item() == 0.0 and torch.equal(out_m[0], V2[0])       # exactly 0, so o1 = v1
torch.testing.assert_close(out_m[1], O_lib[1])                          # row 2 unchanged
print("masked weights:\n", w_m, "\noutput:\n", out_m)

# %% [markdown]
# **`dropout_p`: attention dropout, a regulariser for training.** With probability $p$ each attention
# weight is set to 0 for this forward pass, and the kept weights are multiplied by $1/(1-p)$. The
# rescaling keeps the *expected* weight, and so the expected output, unchanged:
#
# $$ \tilde A_{ij} = \frac{z_{ij}}{1-p} A_{ij}, \quad z_{ij} \sim \operatorname{Bernoulli}(1-p), \qquad
#    \mathbb{E}[\tilde A_{ij}] = \frac{(1-p)\,A_{ij}}{1-p} = A_{ij}. $$
#
# The model cannot rely on any single key being visible, which discourages over-sharp heads (the
# original Transformer used $p = 0.1$ for its dropout). Three rules: dropout is applied to the weights
# **after** the softmax; the function returns the weights **before** dropout (those are what you plot);
# and in evaluation you pass `dropout_p=0.0` (this function has no train/eval switch; a layer passes its
# rate only while `self.training` is true). The check: one draw with $p = 0.5$ differs from the plain
# output, the average of many draws approaches it.

# %%
torch.manual_seed(0)
one_draw, w_drop = scaled_dot_product_attention(Q2, K2, V2, dropout_p=0.5)
draws = torch.stack([scaled_dot_product_attention(Q2, K2, V2, dropout_p=0.5)[0] for _ in range(4000)])
torch.testing.assert_close(w_drop, A_lib)                   # returned weights: before dropout
torch.testing.assert_close(draws.mean(0), O_lib, atol=0.1, rtol=0)  # unbiased on average
print("one draw with p = 0.5:\n", one_draw, "\nmean of 4000 draws:\n", draws.mean(0), "\nwithout dropout:\n", O_lib)

# %% [markdown]
# Common mistakes with these two arguments: masking **after** the softmax (the row no longer sums to 1;
# lesson 03 shows the numbers), using a float 0/1 mask or the opposite polarity (`True` = blocked, as in
# `torch.nn.MultiheadAttention`'s `attn_mask`), forgetting the $1/(1-p)$ rescaling (outputs shrink by a
# factor $1-p$ in training and jump back at evaluation), and leaving dropout on when evaluating.

# %% [markdown]
# ## 6 · Try it: watch the softmax saturate
#
# Below, the six words of our sentence get random unit-variance queries and keys of width $d_k$, as in
# an untrained model (words are only labels here; the vectors are random). The heatmap shows the
# attention weights, with the numbers in the table underneath.
#
# * Drag the **d_k** slider up with **scaling off**: the rows turn into single dark cells, one-hot,
#   because the raw scores grow like $\sqrt{d_k}$.
# * Turn **scaling on** and drag again: the rows stay spread out at every width.
#
# The query and key vectors for a width $d_k$ are the first $d_k$ columns of one fixed random draw, so
# moving the slider adds or removes features rather than redrawing everything.

# %%
MAX_DK = 256
pool_q = torch.randn(len(sentence), MAX_DK, generator=torch.Generator().manual_seed(7))  # (L, 256)
pool_k = torch.randn(len(sentence), MAX_DK, generator=torch.Generator().manual_seed(8))  # (L, 256)
labels = [f"{i + 1} {word}" for i, word in enumerate(sentence)]  # numbered: "the" appears twice
identity_values = torch.eye(len(sentence))  # values are one-hot, so the output row equals the weight row


def weights_for(width, scaled):
    """Attention weights (L, L) of the first `width` features; scaled=False undoes the 1/√d_k."""
    q, k = pool_q[:, :width], pool_k[:, :width]
    if not scaled:
        q = q * math.sqrt(width)   # multiplying q by √d_k cancels the library's division by √d_k
    _, weights = scaled_dot_product_attention(q, k, identity_values)
    return weights


# %% [markdown]
# Two drawing helpers (plumbing: skim them): the heatmap as a figure, and the weights as an HTML table.

# %%
def heatmap_figure(weights, title):
    fig, ax = plt.subplots(figsize=(5.6, 4.4), dpi=90)
    attention_heatmap(weights, labels, labels, title=title, ax=ax)
    fig.tight_layout()
    plt.close(fig)  # shown by display() below, not again at the end of the cell
    return fig


def weights_table(weights):
    header = "".join(f"<th style='padding:2px 6px'>{w}</th>" for w in labels)
    rows = "".join(
        f"<tr><th style='padding:2px 6px;text-align:right'>{word}</th>"
        + "".join(f"<td style='padding:2px 6px;text-align:right'>{x:.3f}</td>" for x in row.tolist()) + "</tr>"
        for word, row in zip(labels, weights))
    return (f"<table style='font-family:monospace'><tr><th style='padding:2px 6px'>query \\ key</th>{header}</tr>"
            f"{rows}</table>")


# %% [markdown]
# The controls: move the slider, tick the box.

# %%
slider = widgets.IntSlider(value=4, min=1, max=MAX_DK, step=1, description="d_k",
                           continuous_update=False, style={"description_width": "initial"},
                           layout=widgets.Layout(width="420px"))
slider.add_class("attnlab-lesson02-slider")
scale_box = widgets.Checkbox(value=False, description="divide by √d_k", indent=False)
picture = widgets.Output()
picture.add_class("attnlab-lesson02-heatmap")
numbers = widgets.HTML()
numbers.add_class("attnlab-lesson02-weights")


def redraw(_change=None):
    width, scaled = slider.value, scale_box.value
    weights = weights_for(width, scaled)
    label = "scaled" if scaled else "unscaled"
    with picture:
        picture.clear_output(wait=True)
        display(heatmap_figure(weights, f"d_k = {width}, {label}"))
    numbers.value = (f"<b>weights, d_k = {width}, {label}</b> (rows: queries, columns: keys; "
                     f"mean largest weight per row {weights.max(dim=-1).values.mean():.3f})"
                     + weights_table(weights))


slider.observe(redraw, names="value")
scale_box.observe(redraw, names="value")
display(widgets.VBox([widgets.HBox([slider, scale_box]), picture, numbers]))
redraw()

# %% [markdown]
# The same effect, without the slider: the average largest weight per row at a few widths.

# %%
for width in (1, 4, 16, 64, 256):
    raw_max = weights_for(width, scaled=False).max(dim=-1).values.mean()
    scaled_max = weights_for(width, scaled=True).max(dim=-1).values.mean()
    print(f"d_k = {width:3d}:  unscaled {raw_max:.3f}   scaled {scaled_max:.3f}")

# %% [markdown]
# ## 7 · The cost: an $L \times L$ matrix
#
# Self-attention compares every position with every other, so for each head it builds an $L \times L$
# score matrix: time $O(L^2 d_k)$ and memory $O(L^2)$. This is the price of the one-step path from
# lesson 01. Memory for the weights of **one** head of **one** sequence, in float32:

# %%
for length in (512, 2_048, 8_192, 32_768, 131_072):
    print(f"L = {length:>7,}:  {length * length:>17,} scores  = {length * length * 4 / 2**20:>9,.0f} MiB")

# %% [markdown]
# And the time. What is measured: the library's attention for one head with $d_k = d_v = 64$, forward only, on this
# machine, with the torch threads the course's thread policy picks (`attnlab.fast.machine_policy`). Doubling $L$
# quadruples the number of scores, so the time should grow about **4x per doubling**. One timing on a shared machine
# can be off by 2x, so each doubling is measured in paired rounds (one call at $L$ and one at $2L$ per round, their
# order alternating), and the cell plots the median of the per-round ratios with its quartiles. At small $L$ fixed
# overheads can make the ratio smaller than 4; at large $L$ it can be larger than 4, because the $L \times L$ matrix
# (16 MiB at $L = 2048$) no longer fits in the CPU's cache and every pass over it waits for memory. The cell checks
# the claim it can make on any machine: at the largest $L$, doubling $L$ more than doubles the time (the lower
# quartile of the ratio is above 2). About 10 seconds on a shared 2-core machine (measured: 9 s at load average 15).

# %%
lengths = [128, 256, 512, 1024] if QUICK else [128, 256, 512, 1024, 2048]
inputs = {n: [torch.randn(n, 64) for _ in range(3)] for n in lengths}
doublings = [paired_ratio(lambda n=n: scaled_dot_product_attention(*inputs[2 * n]),  # builds the (2L, 2L) weights
                          lambda n=n: scaled_dot_product_attention(*inputs[n]), rounds=9)
             for n in lengths[:-1]]
for n, r in zip(lengths, doublings):
    print(f"L = {n:>4} -> {2 * n:>4}: time x {r.median:.2f} (quartiles {r.q1:.2f}-{r.q3:.2f})")
print(f"measured on {doublings[-1].machine}")

fig, ax = plt.subplots(figsize=(6.5, 4))
middle = [r.median for r in doublings]
spread = [[r.median - r.q1 for r in doublings], [r.q3 - r.median for r in doublings]]
ax.errorbar([str(n) for n in lengths[:-1]], middle, yerr=spread, fmt="o-", lw=2, capsize=4,
            label="measured: median of paired rounds, quartiles")
ax.axhline(4, ls=":", color="0.4", label="4x: the number of scores")
ax.axhline(2, ls="--", color="0.7", label="2x: linear growth")
ax.set_xlabel("L, doubled to 2L")
ax.set_ylabel("time at 2L / time at L")
ax.set_title("One attention head: doubling L multiplies the time by about 4")
ax.legend()
ax.grid(alpha=0.3)
plt.show()
claim(doublings[-1].q1 > 2, f"doubling L from {lengths[-2]} to {lengths[-1]} more than doubles the time",
      f"lower quartile of the ratio {doublings[-1].q1:.2f}")


# %% [markdown]
# The ratios scatter around 4: below it where fixed overheads still count, above it once the scores leave the
# cache, and with wide quartiles when the machine is busy (the spread is part of the measurement). Lesson 10 returns
# to what this means for long contexts.

# %% [markdown]
# ## 8 · Common mistakes, and what they do to the numbers
#
# Each of these runs without an error on square inputs, so they are easy to miss. Here they are on the
# worked example (correct answer $O \approx [[2.00, 3.00], [2.34, 3.34]]$):
#
# | Mistake | Code |
# |---|---|
# | forgetting the scale | `softmax(Q @ K.T)` |
# | scaling by $d_k$ instead of $\sqrt{d_k}$ | `softmax(Q @ K.T / d_k)` |
# | softmax over the wrong axis | `softmax(..., dim=0)`: columns sum to 1, not rows |
# | transposing $Q$ instead of $K$ | `Q.T @ K`: a $d_k \times d_k$ matrix, not $L \times S$ |

# %%
def run_mistake(scores, dim=-1):
    """Finish attention from a score matrix: softmax along `dim`, then mix the values."""
    return torch.softmax(scores, dim=dim) @ V2


mistakes = {
    "correct": run_mistake(Q2 @ K2.T / math.sqrt(2)),
    "no scale": run_mistake(Q2 @ K2.T),
    "scale by d_k": run_mistake(Q2 @ K2.T / 2),
    "softmax over dim=0": run_mistake(Q2 @ K2.T / math.sqrt(2), dim=0),
    "Q.T @ K": run_mistake(Q2.T @ K2 / math.sqrt(2)),
}
torch.testing.assert_close(mistakes["correct"], O_lib)   # the reference row really is the library's answer
for name, out in mistakes.items():
    error = (out - mistakes["correct"]).abs().max()
    print(f"{name:>20s}: O = {np.array2string(out.numpy(), separator=', ').replace(chr(10), '')}   max error {error:.2f}")

# %% [markdown]
# On this tiny example the first two mistakes move the answer by only about 0.1, because
# $d_k = 2$ barely changes the scale. The axis and transpose mistakes give a different matrix
# outright. Note that in this example `Q.T @ K` even has the right shape, only because $L = d_k = 2$.
#
# The scaling mistakes matter at realistic widths. Take one head with $d_k = 64$ inside a model with
# $d_\text{model} = 512$ and 16 keys, and measure how peaked the rows are (largest weight, and
# entropy in bits; uniform over 16 keys would be 4 bits):

# %%
gen = torch.Generator().manual_seed(3)
q64 = torch.randn(256, 1, 64, generator=gen)       # (N, 1, d_k)
k64 = torch.randn(256, 16, 64, generator=gen)      # (N, S, d_k)
raw64 = (q64 @ k64.transpose(-2, -1)).squeeze(1)   # (N, S)
for name, divisor in [("correct: √d_k = 8", 8.0), ("no scale: 1", 1.0), ("by d_k: 64", 64.0),
                      ("by √d_model: √512", math.sqrt(512)), ("by d_model: 512", 512.0)]:
    a = torch.softmax(raw64 / divisor, dim=-1)
    entropy = -(a * a.clamp_min(1e-30).log2()).sum(-1).mean()
    print(f"{name:>20s}: largest weight {a.max(-1).values.mean():.2f}, entropy {entropy:.2f} bits")

# %% [markdown]
# No scaling gives nearly one-hot rows (saturated, with a much smaller gradient). Dividing by too much ($d_k$, or anything
# with $d_\text{model}$) flattens the rows towards uniform: attention becomes a plain average that cannot
# prefer anything until the weights grow large. Only $\sqrt{d_k}$, the width of the vectors actually
# being dot-multiplied **inside one head**, keeps the scores at unit variance.
#
# And the transpose mistake with non-square shapes: with $L = 3$ queries, $S = 5$ keys and $d_k = 4$,
# `Q.T @ K` fails loudly, which is the lucky case.

# %%
Q_ns, K_ns = torch.randn(3, 4), torch.randn(5, 4)
print("Q @ K.T :", tuple((Q_ns @ K_ns.T).shape), " <- (L, S), correct")
try:
    Q_ns.T @ K_ns
except RuntimeError as error:
    print("Q.T @ K : RuntimeError:", str(error).split("(")[0].strip())

# %% [markdown]
# ## 9 · Practice
#
# On paper first:
#
# 1. $Q = [[1, 1]]$, $K = [[1, 1], [1, -1]]$, $V = [[0, 4], [8, 0]]$. Compute the scaled scores, the
#    weights and the output.
# 2. A model has $d_\text{model} = 768$ and 12 heads. By which number are the scores divided?
# 3. You double $d_k$ and forget the scaling. By what factor does the standard deviation of the scores grow?
# 4. $L = 4096$, 16 heads, batch 8. How many attention weights are stored in float32 per layer, and how many MiB?
#
# <details><summary><b>Answers</b> (click to open)</summary>
#
# 1. Scores $[2, 0] / \sqrt 2 = [1.41, 0]$; weights $\approx [0.80, 0.20]$; output $\approx 0.80\,[0, 4] + 0.20\,[8, 0] = [1.56, 3.22]$.
# 2. $d_k = 768 / 12 = 64$, so by $\sqrt{64} = 8$.
# 3. By $\sqrt 2 \approx 1.41$ (the variance doubles).
# 4. $8 \cdot 16 \cdot 4096^2 \approx 2.1 \times 10^9$ weights, times 4 bytes $= 8192$ MiB (8 GiB), for one layer.
#
# </details>
#
# Check your answer to question 1 with the library:

# %%
out1, w1 = scaled_dot_product_attention(torch.tensor([[1.0, 1.0]]), torch.tensor([[1.0, 1.0], [1.0, -1.0]]),
                                        torch.tensor([[0.0, 4.0], [8.0, 0.0]]))
print("weights", w1.numpy(), " output", out1.numpy())

# %% [markdown]
# ## Mastery check

# %%
from attnlab.practice import mastery_check

mastery_check("02")

# %% [markdown]
# **Next:** the exercise `exercises/02_scaled_dot_product_attention/`, where you implement this function
# yourself, then lesson 03 on masks: how to stop a position from looking where it must not.
