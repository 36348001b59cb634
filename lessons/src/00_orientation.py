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

# %% [markdown]
# # Lesson 00 · Orientation
#
# Welcome to **attnlab**, a hands-on course on attention and Transformers. By the end you will
# have built, trained and sampled from a small GPT, and you will know *why* every piece of it is
# there.
#
# This first lesson is short. It covers:
#
# 1. how the course works (lessons, exercises, mastery gates, hints, the `attnlab` command);
# 2. the notation every lesson uses for tensor shapes;
# 3. a quick check that your environment works;
# 4. two warm-ups you will need from lesson 01 on: **matrix shapes** and the **softmax**.
#
# Run the cells from top to bottom (`Shift`+`Enter`). Nothing here takes more than a second.

# %% [markdown]
# ## 1 · How the course works
#
# Each topic goes round the same loop:
#
# * **Lesson** (`lessons/NN_topic.ipynb`): explanation, worked examples, plots and sliders to play with.
#   It ends with a **mastery check**: a few short practice cards.
# * **Exercise** (`exercises/NN_name/NN_name.ipynb`): you write the code yourself. Exercise cells
#   marked `# YOUR CODE HERE` are yours to fill in. Each one is followed by a **check cell** for a
#   quick first check (for code it says what is wrong; for numbers worked by hand only whether they
#   can be read). To check your work as the grader does, run `attnlab check` on the notebook (below).
# * **Mastery gate**: the first cell of the next lesson checks that you have mastered the skills it
#   builds on. If something is missing it tells you which skill and offers practice. It never stops
#   you: you can always read on, but the lesson will be harder.
#
# The figure below shows the loop.

# %%
# %matplotlib inline
import platform

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

import attnlab

torch.manual_seed(0)
plt.rcParams["figure.dpi"] = 100

# %%
fig, ax = plt.subplots(figsize=(9, 3.2))
stages = [
    ("Lesson\nlessons/NN_*.ipynb", "#dbe9f6"),
    ("Mastery check\n(end of lesson)", "#fde9c9"),
    ("Exercise\nexercises/NN_*/", "#e2f0d9"),
    ("Gate\n(first cell of\nnext lesson)", "#f4d6d6"),
]
xs = [1.0, 3.6, 6.2, 8.8]
for (label, colour), x in zip(stages, xs):
    ax.add_patch(FancyBboxPatch((x - 1.0, 0.55), 2.0, 0.9, boxstyle="round,pad=0.08",
                                facecolor=colour, edgecolor="0.3"))
    ax.text(x, 1.0, label, ha="center", va="center", fontsize=10)
for a, b in zip(xs[:-1], xs[1:]):
    ax.add_patch(FancyArrowPatch((a + 1.05, 1.0), (b - 1.05, 1.0), arrowstyle="-|>",
                                 mutation_scale=16, color="0.3"))
ax.add_patch(FancyArrowPatch((xs[-1], 0.5), (xs[0], 0.5), connectionstyle="arc3,rad=-0.12",
                             arrowstyle="-|>", mutation_scale=16, color="tab:green"))
ax.text(4.9, -0.22, "gate passed: start the next lesson", ha="center", color="tab:green", fontsize=10)
ax.text(4.9, -0.7, "gate finds a skill missing?  practise it with  attnlab practice SKILL,  then carry on",
        ha="center", color="tab:red", fontsize=10)
ax.text(4.9, 1.9, "one topic = lesson → mastery check → exercise → gate → next lesson",
        ha="center", fontsize=11, weight="bold")
ax.set_xlim(-0.2, 10.0)
ax.set_ylim(-0.95, 2.1)
ax.axis("off")
plt.show()

# %% [markdown]
# ### Where things live
#
# | What | Where |
# |---|---|
# | lessons (read and play) | `lessons/00_orientation.ipynb` … `lessons/10_costs_and_limits.ipynb` |
# | exercises (you write code) | `exercises/01_routing_and_soft_lookup/` … `exercises/10_costs_and_limits/` |
# | the reference library | the `attnlab` Python package (`attnlab.nn`, `attnlab.viz`, `attnlab.practice`) |
# | your progress | a folder given by the environment variable `ATTNLAB_HOME` (default `~/.attnlab`) |
#
# ### Checking your work and asking for hints
#
# * **Exercises**: the check cell under each answer gives a quick first check. To know whether your
#   work is right, save the notebook and run `attnlab check exercises/NN_name/NN_name.ipynb` in a
#   terminal (or `from attnlab.check import check; check()` in a cell of the exercise). It grades
#   your copy as the grader does: your functions on fresh random inputs, your by-hand numbers, the
#   named mistake, item by item, ending with your points. Written answers are listed apart, with the
#   model answer and the rubric once you have attempted them. In a graded class your instructor may
#   limit it to the check cells or switch it off for an exercise; it then says so.
# * **Practice cards** (in the mastery check and wherever a lesson offers practice): type your
#   answer and press *Check*. A wrong answer gets specific feedback, often naming the exact slip
#   (for example "you forgot to divide by √d_k"). Press **Hint** if you are stuck; hints come one step
#   at a time, so press it again for the next one.
# * **Mastery rule**: a skill counts as mastered after **3 correct answers in a row**, each on fresh
#   numbers and without a hint. A wrong answer or a hint restarts the count, so hints are free to use
#   while learning, but mastery shows you can do it alone. Mastered skills come back later for a short
#   review, so they stay mastered.
#
# ### The `attnlab` command
#
# In a terminal (or in a notebook cell starting with `!`):
#
# | Command | What it does |
# |---|---|
# | `attnlab progress` | your progress, lesson by lesson and skill by skill |
# | `attnlab skills --lesson 02` | the skills of one lesson, with their names |
# | `attnlab practice SKILL` | fresh problems for one skill, in the terminal (`h` for a hint) |
# | `attnlab hint SKILL` | the next hint for the problem you have open |
# | `attnlab gate 03` | the prerequisite check of lesson 03, without opening it |
# | `attnlab check NOTEBOOK` | grade your copy of an exercise notebook as the grader does |
#
# Your progress is stored per learner. The next cell shows who the course thinks you are, where your
# progress is kept, and the names of the skills this lesson checks (the names `attnlab practice` expects).

# %%
from attnlab.practice import attnlab_home, learner_id, skills_for_lesson

print("learner        :", learner_id())
print("progress folder:", attnlab_home())
for skill in skills_for_lesson("00"):
    print(f"skill of lesson 00: {skill.name:<22s} {skill.title}")

# %% [markdown]
# ## 2 · Environment check
#
# The course runs on a laptop CPU. A GPU is never required; if you have one, a few later lessons
# will use it to run faster.

# %%
print(f"python  {platform.python_version()}")
print(f"torch   {torch.__version__}")
print(f"numpy   {np.__version__}")
print(f"attnlab {attnlab.__version__}")
device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"device  {device}" + (f" ({torch.cuda.get_device_name(0)})" if device == "cuda" else ""))
print(f"CPU threads used by torch: {torch.get_num_threads()}")

# %% [markdown]
# If the cell above printed versions without an error, you are ready. If `import attnlab` failed,
# the notebook is not running in the course environment: pick the kernel of the course's virtual
# environment (menu *Kernel → Change Kernel*) and run the cell again.

# %% [markdown]
# ## 3 · Notation: the shape legend
#
# Attention code is mostly about tensors of shape *(batch, length, features)*. Every lesson, every
# docstring and every exercise uses the same letters:
#
# | Symbol | Meaning | Typical value |
# |---|---|---|
# | $B$ | batch size: how many sequences are processed together | 32 |
# | $L$ | query (target) length: how many positions *ask* for information | 128 |
# | $S$ | key/value (source) length: how many positions can *be asked*; $S = L$ in self-attention | 128 |
# | $d_\text{model}$ | width of each token vector flowing through the model | 512 |
# | $d_k$ | width of one query or key vector (per head) | 64 |
# | $d_v$ | width of one value vector (per head) | 64 |
# | $H$ | number of attention heads (`n_heads`), with $d_k = d_\text{model} / H$ | 8 |
# | $d_\text{ff}$ | hidden width of the feed-forward network in each block | 2048 |
#
# The numbers on the right are those of the original Transformer (Vaswani et al., 2017).
# The same legend sits at the top of the library itself:

# %%
print(attnlab.__doc__.split("Masks")[0])


# %% [markdown]
# ## 4 · Warm-up 1: matrix shapes
#
# Two rules carry almost all of the shape bookkeeping in this course.
#
# **Matrix product.** $(m \times n)\,(n \times p) = (m \times p)$: the inner sizes must agree and
# disappear. In PyTorch, `@` applies this to the **last two** axes and treats every axis before them as a
# batch axis, so `(B, L, d_k) @ (B, d_k, S)` gives `(B, L, S)`.
#
# **Transpose the last two axes.** To compare every query with every key we need $K^\top$.
# For a batched tensor, write `k.transpose(-2, -1)`: it swaps the last two axes and leaves batch
# axes alone.
#
# The picture shows the product you will meet in every lesson: queries $(L \times d_k)$ times
# transposed keys $(d_k \times S)$ gives one score for every (query, key) pair.

# %%
def draw_matrix(ax, x, y, rows, cols, label, colour):
    """Draw a rows-by-cols rectangle (0.35 units per entry) with its shape written inside."""
    w, h = 0.35 * cols, 0.35 * rows
    ax.add_patch(plt.Rectangle((x, y - h), w, h, facecolor=colour, edgecolor="0.2"))
    ax.text(x + w / 2, y - h / 2, label, ha="center", va="center", fontsize=11)
    return x + w


L_demo, S_demo, dk_demo = 5, 7, 3
fig, ax = plt.subplots(figsize=(9, 2.8))
right = draw_matrix(ax, 0.0, 2.5, L_demo, dk_demo, f"Q\n{L_demo}×{dk_demo}\n(L×d_k)", "#dbe9f6")
ax.text(right + 0.3, 1.6, "@", fontsize=18, va="center")
right = draw_matrix(ax, right + 0.8, 2.5, dk_demo, S_demo, f"Kᵀ  {dk_demo}×{S_demo}  (d_k×S)", "#e2f0d9")
ax.text(right + 0.3, 1.6, "=", fontsize=18, va="center")
draw_matrix(ax, right + 0.8, 2.5, L_demo, S_demo, f"scores\n{L_demo}×{S_demo}\n(L×S)", "#fde9c9")
ax.set_xlim(-0.2, right + 0.8 + 0.35 * S_demo + 0.2)
ax.set_ylim(0.5, 2.7)
ax.set_aspect("equal")
ax.axis("off")
ax.set_title("the inner size d_k must agree, and it disappears")
plt.show()

# %% [markdown]
# Now the same thing in PyTorch, with a batch axis in front. Before running the cell, predict the three
# shapes it prints.

# %%
B, L, S, d_k = 2, 5, 7, 3
q = torch.randn(B, L, d_k)                  # (B, L, d_k)
k = torch.randn(B, S, d_k)                  # (B, S, d_k)
k_t = k.transpose(-2, -1)                   # (B, d_k, S)
scores = q @ k_t                            # (B, L, d_k) @ (B, d_k, S) -> (B, L, S)
print("q      ", tuple(q.shape))
print("k.T    ", tuple(k_t.shape))
print("scores ", tuple(scores.shape))

# %% [markdown]
# Each entry of `scores` is one dot product: `scores[b, i, j]` $= q_i \cdot k_j$ for sequence `b`.
# Checking one entry by hand is the quickest way to be sure a product means what you think:

# %%
b, i, j = 1, 2, 4
by_hand = sum(q[b, i, t] * k[b, j, t] for t in range(d_k))
torch.testing.assert_close(scores[b, i, j], by_hand)
print(f"scores[{b},{i},{j}] = {scores[b, i, j]:.4f}  (equals the dot product q_{i} · k_{j})")


# %% [markdown]
# ## 5 · Warm-up 2: the softmax
#
# Attention turns a row of arbitrary real **scores** (also called *logits*) into **weights** that are
# positive and sum to 1. The tool is the softmax:
#
# $$
# \operatorname{softmax}(z)_j = \frac{e^{z_j}}{\sum_{t} e^{z_t}}.
# $$
#
# Three facts to keep:
#
# 1. every output is in $(0, 1)$ and the outputs sum to $1$ (a probability distribution);
# 2. adding the same constant to every score changes nothing: $\operatorname{softmax}(z + c) = \operatorname{softmax}(z)$;
# 3. **scale matters**: multiplying the scores by a large number makes the distribution peaked, a small
#    number makes it flat. Writing the scale as a *temperature* $T$, $\operatorname{softmax}(z / T)$ is
#    nearly one-hot for small $T$ and nearly uniform for large $T$.
#
# Fact 3 is the whole reason for the $\sqrt{d_k}$ in "scaled dot-product attention" (lesson 02).
#
# Here is the formula written out in NumPy, checked against PyTorch's `torch.softmax`:

# %%
def softmax_numpy(z):
    """Softmax of a 1-D array, written from the formula (with the max subtracted for safety)."""
    e = np.exp(z - z.max())
    return e / e.sum()


logits = np.array([2.0, 1.0, 0.1, -1.0])
weights = softmax_numpy(logits)
print("weights:", weights.round(3), " sum =", weights.sum())
torch.testing.assert_close(torch.from_numpy(weights), torch.softmax(torch.from_numpy(logits), dim=-1))

# %% [markdown]
# Fact 2 in action: shifting all scores by 100 gives exactly the same weights.

# %%
torch.testing.assert_close(softmax_numpy(logits + 100.0), weights)
print("softmax(z + 100) == softmax(z):", np.allclose(softmax_numpy(logits + 100.0), weights))

# %% [markdown]
# Fact 3 as a picture: the same four scores at three temperatures.

# %%
temperatures = [0.25, 1.0, 4.0]
fig, axes = plt.subplots(1, 3, figsize=(10, 3), sharey=True)
for ax, T in zip(axes, temperatures):
    w = softmax_numpy(logits / T)
    ax.bar(range(len(logits)), w, color="tab:blue")
    for x, value in enumerate(w):
        ax.text(x, value + 0.02, f"{value:.2f}", ha="center", fontsize=9)
    ax.set_xticks(range(len(logits)), [f"z={z:g}" for z in logits])
    ax.set_title(f"T = {T:g}" + ("  (peaked)" if T < 1 else "  (flat)" if T > 1 else ""))
    ax.set_ylim(0, 1.1)
axes[0].set_ylabel("softmax weight")
fig.suptitle("softmax(z / T): low temperature sharpens, high temperature flattens", y=1.03)
plt.show()

# %% [markdown]
# ### Try it: the temperature slider
#
# Move the slider. Watch two numbers: the **largest weight** (how much goes to the winner) and the
# **entropy** (in bits: 0 means all weight on one score, $\log_2 4 = 2$ means perfectly uniform over
# four). What happens as $T \to 0$? As $T$ grows large? Does the *order* of the bars ever change?

# %%
import ipywidgets as widgets


def show_temperature(T=1.0):
    w = softmax_numpy(logits / T)
    entropy = -(w * np.log2(w + 1e-300)).sum()
    fig, ax = plt.subplots(figsize=(5.5, 3))
    ax.bar(range(len(logits)), w, color="tab:orange")
    ax.set_xticks(range(len(logits)), [f"z={z:g}" for z in logits])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("weight")
    ax.set_title(f"T = {T:.2f}:  max weight {w.max():.3f},  entropy {entropy:.2f} bits")
    plt.show()


widgets.interact(
    show_temperature,
    T=widgets.FloatLogSlider(value=1.0, base=10, min=-1.5, max=1.5, step=0.05,
                             description="temperature T", style={"description_width": "initial"}),
);

# %% [markdown]
# ### Why subtract the maximum?
#
# $e^{z}$ overflows a 32-bit float for $z$ above about 88. A softmax written naively, as
# $e^{z_j} / \sum_t e^{z_t}$, then returns `nan` ($\infty / \infty$). Subtracting the maximum first
# (allowed by fact 2) keeps every exponent $\le 0$. PyTorch's `softmax` does this for you.

# %%
big = torch.tensor([1000.0, 999.0, 0.0])
naive = big.exp() / big.exp().sum()
print("naive  :", naive)
print("torch  :", torch.softmax(big, dim=-1))

# %% [markdown]
# ## 6 · Common mistakes
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | softmax over the wrong axis | on a `(L, S)` score matrix, `dim=0` makes **columns** sum to 1, so each query no longer gets a distribution over keys | always normalise over the keys: `dim=-1` |
# | naive `exp(z) / exp(z).sum()` | `nan` as soon as one score passes ~88 in float32 | use `torch.softmax`, or subtract the max |
# | `*` instead of `@` | elementwise product (needs equal or broadcastable shapes, gives no dot products) | `@` for matrix products |
# | `.T` on a batched tensor | reverses **all** axes, batch included: `(B, L, d_k)` becomes `(d_k, L, B)` | `x.transpose(-2, -1)` |
#
# The first and last mistakes are silent when the shapes happen to be square, so here they are in
# numbers:

# %%
square_scores = torch.tensor([[2.0, 0.0, 0.0],
                              [0.0, 0.0, 3.0],
                              [1.0, 1.0, 1.0]])
right_axis = square_scores.softmax(dim=-1)
wrong_axis = square_scores.softmax(dim=0)
print("row sums, dim=-1:", right_axis.sum(dim=-1))
print("row sums, dim=0 :", wrong_axis.sum(dim=-1), " <- not a distribution per query")

x = torch.zeros(2, 5, 3)  # (B, L, d_k)
print("x.T shape                 :", tuple(x.permute(*reversed(range(x.ndim))).shape), " (what .T does)")
print("x.transpose(-2, -1) shape :", tuple(x.transpose(-2, -1).shape))

# %% [markdown]
# ## 7 · Practice
#
# Answer these in your head (or on paper) first, then run the cell to compare.
#
# 1. `x` has shape `(4, 10, 64)` and `w` has shape `(64, 16)`. What is the shape of `x @ w`?
# 2. What is the shape of `q @ k.transpose(-2, -1)` for `q: (4, 10, 16)` and `k: (4, 12, 16)`?
# 3. What is $\operatorname{softmax}([0, 0, 0, 0])$? And $\operatorname{softmax}([\ln 3, 0])$?
# 4. At temperature $T = 1/2$, is the largest weight bigger or smaller than at $T = 1$?

# %%
print("1.", tuple((torch.zeros(4, 10, 64) @ torch.zeros(64, 16)).shape))
print("2.", tuple((torch.zeros(4, 10, 16) @ torch.zeros(4, 12, 16).transpose(-2, -1)).shape))
print("3.", softmax_numpy(np.zeros(4)), softmax_numpy(np.array([np.log(3.0), 0.0])))
print("4.", "T=1/2:", softmax_numpy(logits / 0.5).max().round(3), " T=1:", softmax_numpy(logits).max().round(3))

# %% [markdown]
# ## Mastery check
#
# The cards below give you fresh numbers each time. Solving them is how lesson 01's gate (its first
# cell) learns that you are ready: the gate lists the skills not yet mastered and suggests practising
# them first. It advises; it never locks a lesson. (Running this cell records nothing until you answer.)

# %%
from attnlab.practice import mastery_check

mastery_check("00")

# %% [markdown]
# **Next:** lesson 01, *The routing problem*: why sequence models need to move information between
# positions, and why attention does it in one step.
