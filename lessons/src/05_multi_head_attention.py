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

gate("05")

# %% [markdown]
# # Lesson 05 · Multi-head attention
#
# One attention layer gives each token **one** probability distribution over the other tokens.
# That is a single question per token: "where should I look?" But a word usually needs
# several answers at once. In *"The animal didn't cross the street because it was too tired"*,
# the token *it* wants to know its referent (*animal*), its verb (*was*), and perhaps simply its
# neighbours. One softmax has to blend all of that into a single set of weights.
#
# **Multi-head attention** runs $H$ attention operations side by side, each with its own
# projections, so each can ask a different question. Then it glues the answers back together.
# The clever part is that this costs **no extra parameters**: the model width is split between
# the heads.
#
# **You will be able to:** write the multi-head formulas; trace every tensor shape from
# $(B, L, d_\text{model})$ to the output; explain why the reshape needs a transpose; count the
# parameters; and reason about the number of heads, multi-query and grouped-query attention.

# %%
import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
from IPython.display import display

from attnlab.nn import (
    MultiHeadAttention,
    causal_mask,
    count_parameters,
    merge_heads,
    relative_shift_matrix,
    scaled_dot_product_attention,
    sinusoidal_encoding,
    split_heads,
)
from attnlab.viz import attention_heatmap

torch.manual_seed(0)
torch.set_printoptions(precision=2, sci_mode=False)

# %% [markdown]
# ## 1 · The formulas
#
# With $H$ heads and $d_k = d_v = d_\text{model} / H$, head $r$ has its own three projections
# $W_Q^{(r)}, W_K^{(r)}, W_V^{(r)} \in \mathbb{R}^{d_\text{model} \times d_k}$:
#
# $$
# \mathrm{head}_r = \mathrm{Attention}\big(XW_Q^{(r)},\; XW_K^{(r)},\; XW_V^{(r)}\big)
#   = \mathrm{softmax}\!\left(\frac{Q^{(r)}K^{(r)\top}}{\sqrt{d_k}}\right)V^{(r)} \in \mathbb{R}^{L\times d_k}
# $$
#
# $$
# \mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_H)\, W_O,
# \qquad W_O \in \mathbb{R}^{d_\text{model}\times d_\text{model}}.
# $$
#
# Two details matter:
#
# * The scale is $\sqrt{d_k}$, the width **of one head**, not $\sqrt{d_\text{model}}$: each head's
#   dot products run over $d_k$ numbers.
# * The heads never talk to each other inside attention. $W_O$ is where their answers get
#   mixed: each output feature can combine information from every head.
#
# In code nobody keeps $3H$ small matrices. The $H$ query matrices sit side by side in one
# $d_\text{model}\times d_\text{model}$ matrix, so one `nn.Linear` computes all heads' queries
# at once, and a reshape hands each head its $d_k$ columns. Let's verify that claim on
# attnlab's `MultiHeadAttention` (note that `nn.Linear` stores its weight as
# `(out_features, in_features)`, so head $r$ owns *rows* $r d_k \dots (r+1)d_k - 1$).

# %%
d_model, H = 8, 2
d_k = d_model // H
mha = MultiHeadAttention(d_model, H)
x = torch.randn(1, 3, d_model)  # (B, L, d_model)

with torch.no_grad():
    all_queries = split_heads(mha.w_q(x), H)  # (B, H, L, d_k)
    for r in range(H):
        rows = slice(r * d_k, (r + 1) * d_k)
        head_r = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]  # (B, L, d_k): X W_Q^(r) + b
        torch.testing.assert_close(head_r, all_queries[:, r])
print(f"one {d_model}x{d_model} projection = {H} per-head projections of {d_model}x{d_k}, side by side")

# %% [markdown]
# The whole layer as a picture: three projections, a split into $H$ heads of $d_k$ columns each, attention
# per head, then the merge (transpose back, reshape) and $W_O$. The next section traces these shapes in code.

# %%
from attnlab.diagrams import head_split_merge

head_split_merge()
plt.show()

# %% [markdown]
# ## 2 · The full shape trace
#
# A configuration small enough to follow every number: $d_\text{model} = 8$, $H = 2$ so $d_k = 4$,
# $L = 3$ tokens, batch $B = 1$. We run the layer one step at a time and record every shape,
# then check that the result equals `mha(x)`.

# %%
trace = []
with torch.no_grad():
    trace.append(("input x", x.shape))
    q, k, v = mha.w_q(x), mha.w_k(x), mha.w_v(x)  # (B, L, d_model) each
    trace.append(("q = x W_Q (all heads at once)", q.shape))
    trace.append(("q.view(B, L, H, d_k)", q.view(1, 3, H, d_k).shape))
    qh, kh, vh = split_heads(q, H), split_heads(k, H), split_heads(v, H)  # (B, H, L, d_k)
    trace.append(("split_heads: .transpose(1, 2)", qh.shape))
    heads, weights = scaled_dot_product_attention(qh, kh, vh)  # (B, H, L, d_k), (B, H, L, L)
    trace.append(("scores / weights per head", weights.shape))
    trace.append(("weights @ v: each head's output", heads.shape))
    concat = merge_heads(heads)  # (B, L, H * d_k)
    torch.testing.assert_close(concat, torch.cat([heads[:, r] for r in range(H)], dim=-1))  # = Concat(head_1, ..., head_H)
    trace.append(("merge_heads = Concat", concat.shape))
    y = mha.w_o(concat)  # (B, L, d_model)
    trace.append(("y = Concat W_O", y.shape))

for step, shape in trace:
    print(f"{step:34s} {tuple(shape)}")

torch.testing.assert_close(y, mha(x)[0])
print("\nstep by step == MultiHeadAttention.forward")

# %% [markdown]
# Read it as a sandwich: the outside is always $(B, L, d_\text{model})$, so a residual
# connection `x + mha(x)` just works. Inside, the head axis $H$ is moved **next to the batch
# axis**, so that `scaled_dot_product_attention` treats $(B, H)$ as "many independent little
# attention problems" of size $L \times d_k$. That is the whole trick:
#
# $$
# \begin{aligned}
# (B, L, d_\text{model}) &\xrightarrow{\text{view}} (B, L, H, d_k) \xrightarrow{\text{transpose}(1,2)} (B, H, L, d_k)\\
# &\xrightarrow{QK^\top} (B, H, L, L) \xrightarrow{\cdot V} (B, H, L, d_k)\\
# &\xrightarrow{\text{transpose, reshape}} (B, L, d_\text{model}).
# \end{aligned}
# $$
#
# ## 3 · Why reshape *without* transpose is wrong
#
# `x.reshape(B, H, L, d_k)` has the right *shape*, so nothing complains. But it is the wrong
# *content*. To see it, fill a tensor so that each entry names its token and feature:
# entry = $10 \times \text{token} + \text{feature}$.

# %%
labelled = (10 * torch.arange(3)[:, None] + torch.arange(8)[None, :]).float()[None]  # (1, 3, 8)
print("input: row = token, entry = 10*token + feature\n", labelled[0].int())
print("\nsplit_heads, head 0 (features 0-3 of tokens 0, 1, 2):\n", split_heads(labelled, 2)[0, 0].int())
print("\nreshape only, 'head 0':\n", labelled.reshape(1, 2, 3, 4)[0, 0].int())

# %% [markdown]
# With the plain reshape, "head 0, token 1" holds features 4–7 of **token 0**, and "token 2"
# holds the first half of token 1. The rows of a head are no longer tokens, so attention
# compares fragments of different tokens. The model output changes accordingly:

# %%
with torch.no_grad():
    wrong_heads = [t.reshape(1, H, 3, d_k) for t in (q, k, v)]  # WRONG: no transpose
    wrong_out, _ = scaled_dot_product_attention(*wrong_heads)
    y_wrong = mha.w_o(wrong_out.reshape(1, 3, d_model))
print("max |difference| to the correct output:", (y_wrong - y).abs().max().item())

# %% [markdown]
# The same goes for merging: the inverse of `view + transpose(1, 2)` is `transpose(1, 2) +
# reshape`, which is what `merge_heads` does. (After a transpose the memory is no longer
# contiguous, so `.view` would raise an error; `.reshape` copies when it has to.)
#
# ## 4 · A bigger configuration: $d_\text{model} = 1024$, $H = 16$
#
# Three questions: (a) what is $d_k$? (b) what are the shapes of one head's $W_Q$,
# $W_K$, $W_V$? (c) what is the shape of one head's score matrix for $L = 128$?
# Work it out on paper first, then run the cell.

# %%
big = MultiHeadAttention(1024, 16)
print("(a) d_k =", big.d_k)
print("(b) one head's W_Q as a math matrix:", tuple(big.w_q.weight[: big.d_k].T.shape), "(same for W_K, W_V)")
with torch.no_grad():
    _, w_big = big(torch.randn(1, 128, 1024), need_weights=True)  # (B, H, L, L)
print("(c) all scores:", tuple(w_big.shape), "-> one head:", tuple(w_big[0, 0].shape))

# %% [markdown]
# ## 5 · Counting parameters: more heads are free
#
# The four projections are $d_\text{model}\times d_\text{model}$ matrices with a bias each:
#
# $$\#\text{params} = 4\,d_\text{model}^2 + 4\,d_\text{model}.$$
#
# $H$ does not appear. Splitting a matrix into more column blocks does not create more
# numbers; each head just gets a thinner slice. Check it for $d_\text{model} = 512$:

# %%
d = 512
print(f"formula 4d^2 + 4d = {4 * d * d + 4 * d:,}")
for n_heads in (1, 2, 4, 8, 16, 32, 64):
    layer = MultiHeadAttention(d, n_heads)
    print(f"H = {n_heads:2d}   d_k = {d // n_heads:3d}   parameters = {count_parameters(layer):,}")

# %% [markdown]
# So "multi-head attention has $H$ times more parameters than single-head" is false. What does
# change with $H$:
#
# | more heads (larger $H$, smaller $d_k$) | fewer heads (smaller $H$, larger $d_k$) |
# |---|---|
# | more distinct attention patterns per layer | fewer patterns |
# | each head compares vectors of only $d_k$ numbers: a less expressive similarity | richer similarity per head |
# | $H$ attention matrices of $L\times L$ to store: memory for weights grows with $H$ | less attention-matrix memory |
# | same projection cost; score cost $H \cdot L^2 \cdot d_k = L^2 d_\text{model}$ is unchanged | same |
#
# In practice $d_k$ is kept around 64–128 and $H$ grows with the width, as in the table of
# section 8.

# %% [markdown]
# ### Worked example with numbers: the head that resolves *it*
#
# Back to the opening sentence. Suppose one head's projections give each token a 2-number key (the head only cares
# about two features): *animal* gets $k = [2, 0]$ ("animate noun"), *street* gets $k = [0, 2]$ ("place noun"), every
# other word $k = [0, 0]$. The query of *it* depends on the context the earlier layers have gathered: next to *tired*
# (a property of animate things) it is $q = [3, 1]$; next to *wide* (a property of places) it is $q = [1, 3]$. Then
#
# $$ \text{score}(\textit{it}, \textit{animal}) = \frac{q \cdot k_\text{animal}}{\sqrt{d_k}} = \frac{3 \cdot 2 + 1 \cdot 0}{\sqrt 2},
#    \qquad \text{score}(\textit{it}, \textit{street}) = \frac{3 \cdot 0 + 1 \cdot 2}{\sqrt 2}, $$
#
# every other score is 0, and the softmax over the 11 words gives the weights printed below. Swap *tired* for *wide*
# and the same head points at *street*: the head has learned the question "which noun can have this property?". A
# second head can at the same time look for *it*'s verb: that is what several heads buy. (The numbers are chosen by
# hand to show the mechanism; a trained model spreads such a job over many dimensions and often several heads.)

# %%
words = "The animal didn't cross the street because it was too tired".split()
keys_it = torch.zeros(len(words), 2)  # (S=11, d_k=2)
keys_it[words.index("animal")] = torch.tensor([2.0, 0.0])
keys_it[words.index("street")] = torch.tensor([0.0, 2.0])
values_it = torch.eye(len(words))  # value = "which word": the output shows where the weight went
for context, q_it in (("tired", [3.0, 1.0]), ("wide", [1.0, 3.0])):
    scores_it = torch.tensor([q_it]) @ keys_it.T / math.sqrt(2)  # (1, 11)
    _, w_it = scaled_dot_product_attention(torch.tensor([q_it]), keys_it, values_it)
    torch.testing.assert_close(w_it, torch.softmax(scores_it, dim=-1))
    a, s = w_it[0, words.index("animal")].item(), w_it[0, words.index("street")].item()
    print(f"'... it was too {context}': score animal {scores_it[0, 1]:.3f}, street {scores_it[0, 5]:.3f}, "
          f"others 0  ->  weight animal {a:.2f}, street {s:.2f}, each other word {w_it[0, 0].item():.3f}")
    assert (a > 0.8) if context == "tired" else (s > 0.8)

# %% [markdown]
# ## 6 · What several heads look like
#
# Each head produces its own $L\times L$ attention matrix. Trained models often contain heads
# with recognisable jobs: one looks at the previous token, one links repeated words, one parks
# its attention on the first token. To *see* such heads without training a model, we build
# them by hand: we write the weights of three heads ourselves and leave the fourth random.
#
# The input for each token is $[\,\text{one-hot word (8)} \mid \mathrm{PE}(p)\ (8) \mid \text{other features (16)}\,]$,
# so $d_\text{model} = 32$, $H = 4$, $d_k = 8$, with a causal mask as in a decoder. Head $r$ owns
# rows $8r \dots 8r+7$ of `w_q.weight` and `w_k.weight`:
#
# * **head 0, previous token:** query $= c\,R_{-1}\mathrm{PE}(p) = c\,\mathrm{PE}(p-1)$, key $= \mathrm{PE}(j)$:
#   the score peaks at $j = p - 1$ (the relative-shift matrix from lesson 04);
# * **head 1, same word:** query $= c \cdot$ one-hot, key $=$ one-hot: the score is high only for
#   the same word;
# * **head 2, first token:** the query is a constant $c\,\mathrm{PE}(0)$ (a bias), key $= \mathrm{PE}(j)$;
# * **head 3:** random weights, as at initialisation.

# %%
words = "the cat sat on the mat".split()
vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}  # the, cat, sat, on, mat
L6, d_hb, H_hb = len(words), 32, 4
gen = torch.Generator().manual_seed(7)
one_hot = torch.eye(8)[[vocab[w] for w in words]]  # (6, 8)
x_hb = torch.cat([one_hot, sinusoidal_encoding(L6, 8), 0.5 * torch.randn(L6, 16, generator=gen)], dim=-1)[None]  # (1, 6, 32)

torch.manual_seed(7)
hand_built = MultiHeadAttention(d_hb, H_hb)
c = 30.0  # sharpness: larger c, more peaked softmax
word, pos = slice(0, 8), slice(8, 16)  # which input coordinates hold what
with torch.no_grad():
    for lin in (hand_built.w_q, hand_built.w_k):
        lin.weight[:24] = 0.0  # heads 0-2: start from zero, then write the pattern
        lin.bias[:24] = 0.0
    hand_built.w_q.weight[0:8, pos] = c * relative_shift_matrix(-1, 8)  # head 0 query: PE(p-1)
    hand_built.w_k.weight[0:8, pos] = torch.eye(8)  # head 0 key: PE(j)
    hand_built.w_q.weight[8:16, word] = c * torch.eye(8)  # head 1 query: the word
    hand_built.w_k.weight[8:16, word] = torch.eye(8)  # head 1 key: the word
    hand_built.w_q.bias[16:24] = c * sinusoidal_encoding(1, 8)[0]  # head 2 query: PE(0), any p
    hand_built.w_k.weight[16:24, pos] = torch.eye(8)  # head 2 key: PE(j)
    _, w_hb = hand_built(x_hb, attn_mask=causal_mask(L6), need_weights=True)  # (1, H, 6, 6)

names = ["head 0: previous token", "head 1: same word", "head 2: first token", "head 3: random"]
fig, axes = plt.subplots(1, H_hb, figsize=(17, 4.2))
for r, ax in enumerate(axes):
    attention_heatmap(w_hb[0, r], words, title=names[r], ax=ax, annotate=False)
fig.tight_layout()
plt.show()

# %% [markdown]
# Same input, same layer, four different distributions per token. (Row 0 of head 0 has no
# previous token; the causal mask leaves it only itself.) In the second *the*, head 1 splits its
# attention between both copies of *the*. $W_O$ then mixes the four heads' value vectors. Real
# heads are learned, not written, and many are not this tidy, but these three patterns are
# among those found in trained Transformers.
#
# ### A head that was trained, not written
#
# Now let gradient descent write the weights. The task needs a previous-token head and nothing else: read random
# tokens, and at every position output the token **before** it. The model is one causal `MultiHeadAttention` with
# 2 heads between a token + position embedding and a linear read-out; nobody tells it where to look.

# %%
import torch.nn.functional as F

V_prev, L_prev, d_prev, H_prev = 16, 12, 32, 2


class PreviousTokenModel(torch.nn.Module):
    """Embedding + learned positions -> one causal MultiHeadAttention -> linear read-out to the vocabulary."""

    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(V_prev, d_prev)
        self.pos = torch.nn.Embedding(L_prev, d_prev)
        self.attn = MultiHeadAttention(d_prev, H_prev)
        self.out = torch.nn.Linear(d_prev, V_prev)

    def forward(self, ids, need_weights=False):  # ids: (B, L) -> logits (B, L, V), weights (B, H, L, L)
        x = self.tok(ids) + self.pos.weight[: ids.shape[1]]
        y, w = self.attn(x, attn_mask=causal_mask(ids.shape[1]), need_weights=need_weights)
        return self.out(y), w


torch.manual_seed(0)
prev_model = PreviousTokenModel()
opt = torch.optim.Adam(prev_model.parameters(), lr=1e-2)
gen = torch.Generator().manual_seed(1)
for _step in range(200):
    ids = torch.randint(0, V_prev, (64, L_prev), generator=gen)  # (B, L) random tokens
    logits, _ = prev_model(ids)
    loss = F.cross_entropy(logits[:, 1:].reshape(-1, V_prev), ids[:, :-1].reshape(-1))  # target: the token before
    opt.zero_grad()
    loss.backward()
    opt.step()

test_ids = torch.randint(0, V_prev, (200, L_prev), generator=torch.Generator().manual_seed(9))  # unseen sequences
with torch.no_grad():
    logits, w_prev = prev_model(test_ids, need_weights=True)  # w_prev: (200, H, L, L)
accuracy = (logits[:, 1:].argmax(-1) == test_ids[:, :-1]).float().mean().item()
rows = torch.arange(1, L_prev)
share = [w_prev[:, h, rows, rows - 1].mean().item() for h in range(H_prev)]  # weight on key i-1, per head
print(f"after 200 steps: {accuracy:.1%} of unseen positions answered right; "
      + ", ".join(f"head {h} puts {s:.1%} of its weight on the previous token" for h, s in enumerate(share)))
fig, axes = plt.subplots(1, H_prev, figsize=(9, 3.8))
for h in range(H_prev):
    attention_heatmap(w_prev[0, h], [str(t) for t in test_ids[0].tolist()], title=f"trained head {h}", ax=axes[h],
                      annotate=False)
fig.tight_layout()
plt.show()

# %% [markdown]
# The band just below the diagonal is a **previous-token head**, learned from data alone (compare the hand-built head 0
# above). Read the printed shares: when both heads learned the same job, nothing in the loss asked them to differ.
# Heads are not guaranteed to specialise; in trained models some heads are redundant, and many can be removed after
# training with little loss (Michel et al. 2019, "Are Sixteen Heads Really Better than One?"). Lesson 09 reads the heads
# of a GPT trained on Shakespeare, where the jobs are less tidy.

# %% [markdown]
# ## 7 · Explore: change the number of heads
#
# The layer below always has the **same** four $12\times 12$ weight matrices; choosing $H$
# only changes how they are cut into heads. Watch $d_k$ and the shapes change, the parameter
# count stay put, and the per-head attention patterns change (each head now looks through a
# thinner or wider slice of the same matrices).

# %%
d12, L12 = 12, 6
torch.manual_seed(1)
base_layer = MultiHeadAttention(d12, 1)
with torch.no_grad():
    base_layer.w_q.weight *= 5.0  # sharper softmax, only for a readable picture
x12 = torch.randn(1, L12, d12, generator=torch.Generator().manual_seed(2))

divisors = [h for h in range(1, d12 + 1) if d12 % h == 0]
h_choice = widgets.Dropdown(options=divisors, value=3, description="n_heads H")
heads_out = widgets.Output()


def draw_heads(*_):
    n_h = h_choice.value
    layer = MultiHeadAttention(d12, n_h)
    layer.load_state_dict(base_layer.state_dict())  # identical parameters, different split
    with torch.no_grad():
        y12, w12 = layer(x12, need_weights=True)  # (1, L, d), (1, H, L, L)
    dk = d12 // n_h
    with heads_out:
        heads_out.clear_output(wait=True)
        print(f"d_model = {d12}, H = {n_h}  ->  d_k = {dk},   parameters = {count_parameters(layer):,}")
        print(f"x {(1, L12, d12)} -> q per head {(1, n_h, L12, dk)} -> scores {(1, n_h, L12, L12)}"
              f" -> heads {(1, n_h, L12, dk)} -> y {tuple(y12.shape)}")
        cols = min(n_h, 6)
        rows = (n_h + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 2.6 * rows), squeeze=False)
        for r in range(rows * cols):
            ax = axes[r // cols][r % cols]
            if r < n_h:
                ax.imshow(w12[0, r], cmap="Blues", vmin=0, vmax=1)
                ax.set_title(f"head {r}", fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
        fig.suptitle("attention weights per head (rows: queries, columns: keys)")
        fig.tight_layout()
        plt.show()


h_choice.observe(draw_heads, "value")
draw_heads()
display(widgets.VBox([h_choice, heads_out]))

# %% [markdown]
# ## 8 · Typical configurations
#
# Real models keep $d_k$ fixed at 64 or 128 and scale the number of heads with the width.
# The attention parameters per layer follow from $4d^2 + 4d$ (GPT-3's row is computed from the
# formula, not by building a 600-million-parameter layer):

# %%
configs = [("Transformer-base", 512, 8), ("BERT-base", 768, 12), ("GPT-2 small", 768, 12), ("GPT-3 175B", 12288, 96)]
print(f"{'model':18s} {'d_model':>7s} {'H':>4s} {'d_k':>4s} {'attention params / layer':>26s}")
for name, dm, nh in configs:
    print(f"{name:18s} {dm:7d} {nh:4d} {dm // nh:4d} {4 * dm * dm + 4 * dm:26,d}")
assert count_parameters(MultiHeadAttention(768, 12)) == 4 * 768**2 + 4 * 768  # the formula, checked

# %% [markdown]
# ## 9 · Variants: multi-query and grouped-query attention
#
# When a model generates text it stores every past token's keys and values (the **KV cache**,
# lesson 08), for every layer and every head. Its size per sequence is
#
# $$ 2 \times n_\text{layers} \times n_\text{kv heads} \times d_k \times L \times \text{bytes per number}. $$
#
# For large models this cache, not the weights, limits how many sequences fit in memory. Two
# variants shrink it by letting query heads **share** keys and values:
#
# * **Multi-query attention (MQA):** $H$ query heads, but one key head and one value head.
# * **Grouped-query attention (GQA):** $H$ query heads in $G$ groups; each group shares one
#   key/value head. $G = H$ is ordinary MHA, $G = 1$ is MQA.
#
# The queries are unchanged, so each head still has its own attention pattern. Mechanically,
# sharing is just broadcasting: a key tensor with $G$ heads is repeated to $H$.

# %%
B, L, Hq, G, dk = 1, 5, 8, 2, 4
q_heads = torch.randn(B, Hq, L, dk)  # 8 query heads
k_groups, v_groups = torch.randn(B, G, L, dk), torch.randn(B, G, L, dk)  # only 2 key/value heads

k_rep = k_groups.repeat_interleave(Hq // G, dim=1)  # (B, Hq, L, dk): heads 0-3 share group 0
v_rep = v_groups.repeat_interleave(Hq // G, dim=1)
gqa_out, gqa_w = scaled_dot_product_attention(q_heads, k_rep, v_rep)
print("GQA: q", tuple(q_heads.shape), "k", tuple(k_groups.shape), "-> out", tuple(gqa_out.shape))

mqa_out, _ = scaled_dot_product_attention(q_heads, k_groups[:, :1], v_groups[:, :1])  # (B, 1, L, dk) broadcasts
print("MQA: one key head broadcast to all", Hq, "query heads -> out", tuple(mqa_out.shape))

# %% [markdown]
# What that buys, for a model of GPT-3's shape (96 layers, 96 heads, $d_k = 128$) holding a
# 2048-token context in 16-bit numbers. (GPT-3 itself uses ordinary MHA; the GQA/MQA rows
# show what the variants would change.)

# %%
n_layers, n_heads_big, dk_big, context, bytes_per = 96, 96, 128, 2048, 2
for name, n_kv in [("MHA (G = 96)", 96), ("GQA (G = 8)", 8), ("MQA (G = 1)", 1)]:
    size = 2 * n_layers * n_kv * dk_big * context * bytes_per
    print(f"{name:13s} KV cache per sequence: {size / 2**30:7.3f} GiB")

# %% [markdown]
# The price: fewer distinct keys/values, which can cost a little quality; GQA with a few
# groups is the usual compromise. The key/value projections also shrink from
# $d_\text{model}\times d_\text{model}$ to $d_\text{model}\times G d_k$.
#
# ## Common mistakes
#
# * **Reshape without transpose** (section 3): right shape, wrong content, no error.
# * **Scaling by $\sqrt{d_\text{model}}$** instead of $\sqrt{d_k}$: logits become too small and
#   the attention too flat.
# * **$d_\text{model}$ not divisible by $H$**: `MultiHeadAttention(10, 3)` raises a `ValueError`;
#   do not "fix" it with floor division, which would drop features.
# * **Thinking heads add parameters.** Total is $4d^2 + 4d$ for any $H$.
# * **Forgetting $W_O$.** Without it the heads' outputs sit side by side, never mixed.
# * **Padding mask with the wrong axes** for $(B, H, L, S)$ scores: use `pad[:, None, None, :]`.
#
# Here is the error you get for a width that does not split:

# %%
try:
    MultiHeadAttention(10, 3)
except ValueError as err:
    print("ValueError:", err)

# %% [markdown]
#
# ## Practice
#
# On paper first:
#
# 1. $d_\text{model} = 768$, $H = 12$, $B = 4$, $L = 50$: what is the shape of the scores tensor?
# 2. How many parameters does `MultiHeadAttention(256, 8, bias=False)` have? And with $H = 4$?
# 3. With GQA, $H = 32$ query heads and $G = 4$: how many query heads share each key head, and by
#    what factor does the KV cache shrink compared with MHA?
# 4. After `q.view(B, L, H, d_k)`, someone forgets `.transpose(1, 2)` and calls attention on a
#    `(B, L, H, d_k)` tensor. What does each "attention matrix" then compare?
#
# <details><summary><b>Answers</b> (click to open)</summary>
#
# 1. $(4, 12, 50, 50)$: one $L\times L$ matrix per example and head.
# 2. $4 \cdot 256^2 = 262{,}144$, for any $H$ that divides 256.
# 3. $32 / 4 = 8$ query heads per key/value head; the cache is $32 / 4 = 8$ times smaller.
# 4. The last two axes are then $(H, d_k)$, so the "scores" are $H\times H$: heads compared with
#    heads *within one token*. No token ever looks at another, and no error is raised.
#
# </details>
#
# Check questions 1 and 2:

# %%
with torch.no_grad():
    _, w_q1 = MultiHeadAttention(768, 12)(torch.randn(4, 50, 768), need_weights=True)
print("scores/weights:", tuple(w_q1.shape))
print("parameters:", count_parameters(MultiHeadAttention(256, 8, bias=False)))

# %% [markdown]
# Now generated problems: the shape after `split_heads`, then the scores, which in
# cross-attention have the key length $S$ of the other sequence as their last axis.

# %%
from attnlab.practice import practice

practice("mha_shape_trace")

# %%
practice("mha_scores_shape")

# %% [markdown]
# ## Mastery check

# %%
from attnlab.practice import mastery_check

mastery_check("05")

# %% [markdown]
# **Next:** the exercise `exercises/05_multi_head_attention/` (split and merge heads, then the
# full layer), then lesson 06, where multi-head attention becomes one half of a Transformer block.
