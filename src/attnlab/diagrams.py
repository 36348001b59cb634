"""Diagrams of the architecture, drawn with matplotlib (no image files), one per mechanism.

Each function returns a ``matplotlib.figure.Figure`` sized for a notebook cell (about 10 inches
wide, labels of at least 9 pt) and draws nothing outside it:

* :func:`sdpa_flow` (lesson 02): the data flow of scaled dot-product attention, with shapes;
* :func:`mask_in_context` (lesson 03): a causal mask next to the sentence it acts on;
* :func:`head_split_merge` (lesson 05): (B, L, d_model) → H heads of d_k → attention → concat → W_O;
* :func:`block_pre_post_ln` (lesson 06): post-LN and pre-LN blocks with their residual paths;
* :func:`three_families` (lesson 07): encoder-only, decoder-only, encoder–decoder with Q/K/V streams;
* :func:`kv_cache_steps` (lesson 08): the KV cache growing by one column per generated token;
* :func:`gpt_stack` (lesson 09): the decoder-only GPT from token ids to next-token probabilities.

tests/test_diagrams.py draws each one and checks that no two labels overlap.
"""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

__all__ = ["sdpa_flow", "mask_in_context", "head_split_merge", "block_pre_post_ln", "three_families",
           "kv_cache_steps", "gpt_stack", "ALL_DIAGRAMS"]

# one colour per kind of thing, the same in every diagram
C_Q, C_K, C_V = "#c6dbef", "#fdd0a2", "#c7e9c0"  # queries, keys, values
C_OP, C_NORM, C_FFN, C_ATT = "#f0f0f0", "#fff2ae", "#dadaeb", "#fbb4ae"  # operation, LayerNorm, FFN, attention
C_RES = "#6a51a3"  # residual path
FONT = 10


def _canvas(width: float, height: float, xlim: tuple[float, float], ylim: tuple[float, float]):
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.axis("off")
    return fig, ax


def _box(ax, x: float, y: float, w: float, h: float, text: str, colour: str = C_OP, size: int = FONT,
         bold: bool = False, edge: str = "0.35"):
    """A rounded box centred at (x, y) of width w and height h, with centred text."""
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                facecolor=colour, edgecolor=edge, lw=1.2))
    ax.text(x, y, text, ha="center", va="center", fontsize=size, weight="bold" if bold else "normal")


def _arrow(ax, start, end, colour: str = "0.3", lw: float = 1.4, rad: float = 0.0, style: str = "-|>"):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=14, lw=lw, color=colour,
                                 connectionstyle=f"arc3,rad={rad}", shrinkA=0, shrinkB=0))


def _note(ax, x: float, y: float, text: str, size: int = 9, colour: str = "0.25", **kw):
    ax.text(x, y, text, fontsize=size, color=colour, **kw)


def sdpa_flow(masked: bool = True):
    """Scaled dot-product attention as a data flow: Q Kᵀ → ÷√d_k → (+ mask) → softmax → · V.

    Shapes follow the course legend: q (L, d_k), k (S, d_k), v (S, d_v); batch and head axes
    are leading axes and are left out. ``masked`` draws the optional mask step.
    """
    fig, ax = _canvas(10, 3.6, (0, 10.4), (0, 3.8))
    _box(ax, 0.7, 3.0, 1.1, 0.55, "Q\n(L, d_k)", C_Q)
    _box(ax, 0.7, 1.9, 1.1, 0.55, "K\n(S, d_k)", C_K)
    _box(ax, 0.7, 0.6, 1.1, 0.55, "V\n(S, d_v)", C_V)
    steps = [("Q Kᵀ", "(L, S) scores"), ("÷ √d_k", "unit variance")]
    if masked:
        steps.append(("+ M", "−∞ where\nmask is False"))
    steps.append(("softmax\nper row", "(L, S) weights A,\nrows sum to 1"))
    xs = [2.5 + 1.75 * i for i in range(len(steps))]
    for i, (x, (label, shape)) in enumerate(zip(xs, steps)):
        _box(ax, x, 2.45, 1.35, 0.75, label, C_ATT if label.startswith("softmax") else C_OP)
        _note(ax, x, 1.7, shape, ha="center", va="top")
        if i:
            _arrow(ax, (xs[i - 1] + 0.68, 2.45), (x - 0.68, 2.45))
    _arrow(ax, (1.25, 3.0), (xs[0] - 0.68, 2.6))
    _arrow(ax, (1.25, 1.9), (xs[0] - 0.68, 2.3))
    x_mix = xs[-1] + 1.8
    _box(ax, x_mix, 1.25, 1.2, 0.65, "A · V", C_OP)
    _arrow(ax, (xs[-1] + 0.68, 2.3), (x_mix - 0.3, 1.58))
    _arrow(ax, (1.25, 0.6), (x_mix - 0.6, 1.1))
    _box(ax, x_mix, 0.3, 1.5, 0.5, "output (L, d_v)", C_Q)
    _arrow(ax, (x_mix, 0.92), (x_mix, 0.55))
    _note(ax, x_mix + 0.1, 3.35, "each output row is a\nweighted average of\nthe value rows", ha="center", va="center")
    ax.set_title("Scaled dot-product attention: softmax(Q Kᵀ / √d_k + M) V", fontsize=12)
    return fig


def mask_in_context(tokens: Sequence[str] = ("<bos>", "the", "cat", "sat", "down"), query: int = 3):
    """A causal mask drawn next to its sentence: which earlier tokens one query may read.

    Left, the sentence with arcs from ``tokens[query]`` to every token it may attend (itself and
    earlier ones) and crossed arcs to the future; right, the (L, L) boolean mask with that row
    outlined. True (✓) = may attend (the decoder's mask, Vaswani et al. 2017, §3.2.3).

    Args:
        tokens: the L tokens of the sentence, in order.
        query: index of the query whose row is drawn, ``0 <= query < L``.

    Returns:
        The matplotlib ``Figure``.

    Raises:
        ValueError: if ``query`` is not an index of ``tokens``.
    """
    L = len(tokens)
    if not 0 <= query < L:
        raise ValueError(f"query must index one of the {L} tokens, got {query}.")
    fig, (ax_s, ax_m) = plt.subplots(1, 2, figsize=(10, 3.6), gridspec_kw={"width_ratios": [1.35, 1]})
    ax_s.set_xlim(-0.6, L - 0.4)
    ax_s.set_ylim(-1.1, 2.4)
    ax_s.axis("off")
    for j, word in enumerate(tokens):
        colour = C_Q if j == query else C_K if j <= query else "#eeeeee"
        _box(ax_s, j, 0, 0.85, 0.5, word, colour, size=10)
        _note(ax_s, j, -0.55, f"pos {j}", ha="center", va="top", size=8)
    for j in range(L):
        if j == query:
            continue
        allowed = j < query
        _arrow(ax_s, (query, 0.3), (j, 0.3), colour="tab:green" if allowed else "tab:red",
               rad=0.4 if j < query else -0.4, lw=1.6 if allowed else 1.0)  # arcs above the boxes
        if not allowed:
            _note(ax_s, (query + j) / 2, 0.35 + 0.22 * abs(j - query), "✗", ha="center", va="center",
                  size=12, colour="tab:red")
    _note(ax_s, (L - 1) / 2, 2.2, f"'{tokens[query]}' may read itself and the past (green), never the future (red)",
          ha="center", va="center", size=9)
    ax_s.set_title("in the sentence", fontsize=11)
    for i in range(L):
        for j in range(L):
            ok = j <= i
            ax_m.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="#41ab5d" if ok else "#f7f7f7",
                                     edgecolor="white", lw=1.5))
            ax_m.text(j, i, "✓" if ok else "✗", ha="center", va="center", fontsize=10,
                      color="white" if ok else "#b03a2e")
    ax_m.add_patch(Rectangle((-0.5, query - 0.5), L, 1, fill=False, edgecolor="tab:blue", lw=3))
    ax_m.set_xlim(-0.5, L - 0.5)
    ax_m.set_ylim(L - 0.5, -0.5)
    ax_m.set_xticks(range(L), tokens, fontsize=9)
    ax_m.set_yticks(range(L), tokens, fontsize=9)
    ax_m.set_xlabel("key j (attended to)", fontsize=9)
    ax_m.set_ylabel("query i", fontsize=9)
    ax_m.set_aspect("equal")
    ax_m.set_title("as the mask: causal_mask(L), row outlined", fontsize=11)
    fig.tight_layout()
    return fig


def head_split_merge(n_heads: int = 4):
    """Multi-head attention's shapes: project, split into heads, attend per head, merge, W_O.

    Draws ``x: (B, L, d_model)`` -> Q, K, V -> H heads of ``(B, H, L, d_k)``, d_k = d_model / H ->
    merge back to ``(B, L, d_model)`` -> ``W_O`` (Vaswani et al. 2017, §3.2.2, Figure 2).

    Args:
        n_heads: number of heads H drawn, 1 to 6.

    Returns:
        The matplotlib ``Figure``.

    Raises:
        ValueError: if ``n_heads`` is not in 1..6.
    """
    if not 1 <= n_heads <= 6:
        raise ValueError(f"draw 1 to 6 heads, got {n_heads}.")
    fig, ax = _canvas(10, 4.4, (0, 11), (-0.2, 5.0))
    _box(ax, 0.85, 2.2, 1.5, 1.2, "x\n(B, L,\nd_model)", C_OP)
    for name, colour, y in (("Q = x W_Q", C_Q, 3.6), ("K = x W_K", C_K, 2.2), ("V = x W_V", C_V, 0.8)):
        _box(ax, 3.0, y, 1.5, 0.6, name, colour, size=9)
        _arrow(ax, (1.6, 2.2), (2.25, y))
    ys = [3.9 - 3.4 * h / max(n_heads - 1, 1) for h in range(n_heads)]
    palette = ["#9ecae1", "#a1d99b", "#fdae6b", "#bcbddc", "#fa9fb5", "#d9d9d9"]
    for h, y in enumerate(ys):
        _box(ax, 5.6, y, 1.6, 0.45, f"head {h}: (B, L, d_k)", palette[h], size=8)
        for y_src in (3.6, 2.2, 0.8):
            _arrow(ax, (3.75, y_src), (4.8, y), colour="0.65", lw=0.6)
        _arrow(ax, (6.4, y), (7.25, 2.2), colour="0.5", lw=0.8)
    _note(ax, 4.3, 4.6, "split: view (B, L, H, d_k),\nthen transpose → (B, H, L, d_k)", ha="center", va="center")
    _note(ax, 5.6, -0.05, "each head runs SDPA on its own d_k = d_model / H columns", ha="center", va="center", size=8)
    _box(ax, 8.0, 2.2, 1.5, 1.0, "merge:\ntranspose\nback, reshape", C_OP, size=9)
    _note(ax, 8.0, 3.1, "(B, L, H·d_k)\n= (B, L, d_model)", ha="center", va="center")
    _box(ax, 9.9, 2.2, 1.2, 0.7, "· W_O", C_ATT)
    _arrow(ax, (8.75, 2.2), (9.3, 2.2))
    _note(ax, 9.9, 1.45, "out\n(B, L, d_model)", ha="center", va="center")
    ax.set_title(f"Multi-head attention with H = {n_heads}: split, attend per head, merge", fontsize=12)
    return fig


def _block_column(ax, x: float, pre: bool):
    """One Transformer block (attention + FFN sublayers) with its residual paths, centred at x."""
    y = 0.4
    _box(ax, x, y, 1.6, 0.45, "x (input)", C_OP)
    ys: dict[str, list[float]] = {}
    items = (["LayerNorm", "self-attention", "+", "LayerNorm", "FFN", "+"] if pre
             else ["self-attention", "+", "LayerNorm", "FFN", "+", "LayerNorm"])
    colours = {"LayerNorm": C_NORM, "self-attention": C_ATT, "FFN": C_FFN, "+": "white"}
    prev = y
    for i, name in enumerate(items):
        y_i = 1.15 + 0.75 * i
        w = 0.45 if name == "+" else 1.8
        _box(ax, x, y_i, w, 0.45, name, colours[name], size=9 if name != "+" else 12)
        _arrow(ax, (x, prev + 0.23), (x, y_i - 0.23))
        ys.setdefault(name, []).append(y_i)
        prev = y_i
    top = prev + 0.75
    _box(ax, x, top, 1.6, 0.45, "output", C_OP)
    _arrow(ax, (x, prev + 0.23), (x, top - 0.23))
    # residual paths: from the branch point to each "+", drawn on the left
    plus = ys["+"]
    starts = [0.4 + 0.23, plus[0] + 0.23] if pre else [0.4 + 0.23, ys["LayerNorm"][0] + 0.23]
    for (y0, y1) in zip(starts, plus):
        xr = x - 1.25
        ax.plot([x, xr, xr], [y0 + 0.12, y0 + 0.12, y1], color=C_RES, lw=2)
        _arrow(ax, (xr, y1), (x - 0.23, y1), colour=C_RES, lw=2)
    return top


def block_pre_post_ln():
    """Post-LN (original Transformer) and pre-LN (GPT-2 onwards) blocks side by side.

    The purple lines are the residual paths. In post-LN every path passes through a LayerNorm
    after each addition; in pre-LN the path from input to output is additions only.
    """
    fig, ax = _canvas(10, 6.2, (0, 10), (0, 6.6))
    _block_column(ax, 2.6, pre=False)
    _block_column(ax, 7.4, pre=True)
    ax.text(2.6, 6.45, "post-LN (Vaswani et al. 2017)\nx ← LayerNorm(x + Sublayer(x))", ha="center", va="top",
            fontsize=10, weight="bold")
    ax.text(7.4, 6.45, "pre-LN (GPT-2 and later)\nx ← x + Sublayer(LayerNorm(x))", ha="center", va="top",
            fontsize=10, weight="bold")
    _note(ax, 3.9, 3.0, "a LayerNorm sits on the\nresidual path after\nevery addition", va="center")
    _note(ax, 8.7, 3.0, "the residual path is\nadditions only: the\ngradient reaches the\ninput unchanged", va="center")
    ax.plot([0.3, 0.9], [0.05, 0.05], color=C_RES, lw=2)
    _note(ax, 1.0, 0.05, "residual path", va="center", colour=C_RES)
    fig.attnlab_alt = ("Diagram: a post-LN block (Vaswani et al. 2017) and a pre-LN block (GPT-2 and later) side "
                       "by side. In post-LN the residual path from input to output passes a LayerNorm after each "
                       "addition; in pre-LN it is additions only, so the gradient reaches the input unchanged.")
    return fig


def _mini_mask(ax, x0: float, y0: float, n: int, m: int, causal: bool, size: float = 0.16, pad_cols: int = 0):
    """A small n × m ✓-grid (dark = may attend) with its top-left corner at (x0, y0)."""
    for i in range(n):
        for j in range(m):
            ok = (j <= i or not causal) and j < m - pad_cols
            ax.add_patch(Rectangle((x0 + j * size, y0 - (i + 1) * size), size, size,
                                   facecolor="#41ab5d" if ok else "#f0f0f0", edgecolor="white", lw=0.8))


def three_families():
    """Encoder-only (BERT), decoder-only (GPT) and encoder–decoder (T5, the original Transformer).

    Each stack shows where Q, K and V come from and a miniature of its mask(s).
    """
    fig, ax = _canvas(10.5, 4.8, (0, 10.5), (0, 5.0))
    # encoder-only
    _box(ax, 1.4, 0.5, 2.0, 0.45, "source tokens", C_OP, size=9)
    _box(ax, 1.4, 1.9, 2.0, 1.2, "encoder ×N\nself-attention\nQ, K, V: source", C_K, size=9)
    _box(ax, 1.4, 3.3, 2.0, 0.45, "one vector per token", C_OP, size=9)
    _arrow(ax, (1.4, 0.73), (1.4, 1.3))
    _arrow(ax, (1.4, 2.5), (1.4, 3.07))
    _mini_mask(ax, 0.95, 4.45, 5, 5, causal=False, pad_cols=1)
    _note(ax, 1.4, 4.75, "encoder-only (BERT)", ha="center", va="center", size=11)
    _note(ax, 1.95, 4.1, "padding\nmask only", va="center", size=8)
    # decoder-only
    _box(ax, 4.6, 0.5, 2.0, 0.45, "tokens so far", C_OP, size=9)
    _box(ax, 4.6, 1.9, 2.0, 1.2, "decoder ×N\nmasked self-attention\nQ, K, V: same text", C_Q, size=9)
    _box(ax, 4.6, 3.3, 2.0, 0.45, "next-token probabilities", C_OP, size=9)
    _arrow(ax, (4.6, 0.73), (4.6, 1.3))
    _arrow(ax, (4.6, 2.5), (4.6, 3.07))
    _mini_mask(ax, 4.15, 4.45, 5, 5, causal=True)
    _note(ax, 4.6, 4.75, "decoder-only (GPT)", ha="center", va="center", size=11)
    _note(ax, 5.15, 4.1, "causal\nmask", va="center", size=8)
    # encoder-decoder
    _box(ax, 7.3, 0.5, 1.5, 0.45, "source", C_OP, size=9)
    _box(ax, 7.3, 1.9, 1.5, 1.2, "encoder ×N\nself-attn\nQ, K, V:\nsource", C_K, size=8)
    _box(ax, 9.4, 0.5, 1.5, 0.45, "target so far", C_OP, size=9)
    _box(ax, 9.4, 1.55, 1.5, 0.55, "masked\nself-attn", C_Q, size=8)
    _box(ax, 9.4, 2.45, 1.5, 0.75, "cross-attn\nQ: decoder\nK, V: encoder", C_ATT, size=8)
    _box(ax, 9.4, 3.3, 1.5, 0.45, "next token", C_OP, size=9)
    _arrow(ax, (7.3, 0.73), (7.3, 1.3))
    _arrow(ax, (9.4, 0.73), (9.4, 1.27))
    _arrow(ax, (9.4, 1.83), (9.4, 2.07))
    _arrow(ax, (9.4, 2.83), (9.4, 3.07))
    _arrow(ax, (8.05, 2.3), (8.65, 2.4), colour="tab:orange", lw=2)
    _note(ax, 8.35, 2.85, "K, V", ha="center", colour="tab:orange", size=8)
    _mini_mask(ax, 7.3, 4.45, 4, 4, causal=True, size=0.13)
    _mini_mask(ax, 7.95, 4.45, 4, 5, causal=False, size=0.13, pad_cols=1)
    _note(ax, 8.5, 4.75, "encoder–decoder (T5, original Transformer)", ha="center", va="center", size=11)
    _note(ax, 8.85, 4.2, "left: decoder, causal\nright: cross, source\npadding (L × S)", va="center", size=8)
    ax.plot([3.0, 3.0], [0.2, 4.9], color="0.85")
    ax.plot([6.2, 6.2], [0.2, 4.9], color="0.85")
    return fig


def kv_cache_steps(n_steps: int = 4, prompt: int = 2):
    """The KV cache growing as tokens are generated: one new query reads all cached keys.

    Row t shows step t: the cached K/V columns (grey), the new token's K/V column (appended,
    orange) and its single query (blue) whose mask row is all True: a ``(1, t + 1)`` score row
    per step instead of a ``(t + 1, t + 1)`` matrix (see :class:`attnlab.nn.KVCache`).

    Args:
        n_steps: generation steps drawn (>= 1).
        prompt: tokens already cached before the first step (>= 1).

    Returns:
        The matplotlib ``Figure``.

    Raises:
        ValueError: if ``n_steps`` or ``prompt`` is below 1.
    """
    if n_steps < 1 or prompt < 1:
        raise ValueError(f"n_steps and prompt must be >= 1, got {n_steps}, {prompt}.")
    total = prompt + n_steps
    fig, ax = _canvas(10, 0.9 * n_steps + 1.4, (-2.6, total + 3.2), (-0.5, n_steps + 0.9))
    for step in range(n_steps):
        y = n_steps - step - 0.5
        t = prompt + step  # cached positions before this step
        ax.text(-2.5, y, f"step {step + 1}", va="center", fontsize=10, weight="bold")
        _box(ax, -0.8, y, 0.9, 0.5, f"q{t}", C_Q, size=9)
        _arrow(ax, (-0.35, y), (-0.05, y))
        for j in range(t + 1):
            new = j == t
            ax.add_patch(Rectangle((j, y - 0.3), 0.9, 0.6, facecolor="#fdae6b" if new else "#d9d9d9",
                                   edgecolor="0.4"))
            ax.text(j + 0.45, y, f"k{j},v{j}", ha="center", va="center", fontsize=7.5)
        _note(ax, t + 1.2, y, f"cache: {t + 1} positions; 1 × {t + 1} scores", va="center", size=9)
    _note(ax, 0, n_steps + 0.45,
          "grey: read from the cache (computed at earlier steps)     orange: computed now and appended",
          va="center", size=9)
    ax.set_title("The KV cache: each step feeds only the newest token and reuses every earlier K and V",
                 fontsize=11)
    return fig


def gpt_stack(n_layers_label: str = "N"):
    """A decoder-only GPT: token + position embeddings, N pre-LN blocks, final LayerNorm, tied head."""
    fig, ax = _canvas(10, 6.6, (0, 10), (0, 7.0))
    _box(ax, 3.0, 0.35, 3.2, 0.45, "token ids (B, T)", C_OP)
    _box(ax, 2.1, 1.15, 1.9, 0.5, "token embedding\nW_E: (V, d)", C_K, size=9)
    _box(ax, 4.1, 1.15, 1.7, 0.5, "position emb.\n(block_size, d)", C_K, size=9)
    _box(ax, 3.0, 1.85, 0.45, 0.4, "+", "white", size=12)
    _arrow(ax, (3.0, 0.58), (2.1, 0.9))
    _arrow(ax, (3.0, 0.58), (4.1, 0.9))
    _arrow(ax, (2.1, 1.4), (2.85, 1.75))
    _arrow(ax, (4.1, 1.4), (3.15, 1.75))
    # the repeated block
    ax.add_patch(FancyBboxPatch((1.0, 2.35), 4.0, 3.05, boxstyle="round,pad=0.05", facecolor="#f7fbff",
                                edgecolor=C_RES, lw=1.5, ls="--"))
    ax.text(5.15, 3.85, f"× {n_layers_label}\nblocks", fontsize=11, va="center", weight="bold", color=C_RES)
    _box(ax, 3.0, 2.7, 1.9, 0.4, "LayerNorm", C_NORM, size=9)
    _box(ax, 3.0, 3.25, 2.6, 0.45, "causal multi-head attention", C_ATT, size=9)
    _box(ax, 3.0, 3.8, 0.4, 0.35, "+", "white", size=11)
    _box(ax, 3.0, 4.2, 1.9, 0.35, "LayerNorm", C_NORM, size=9)
    _box(ax, 3.0, 4.62, 1.9, 0.35, "FFN (GELU)", C_FFN, size=9)
    _arrow(ax, (3.0, 2.05), (3.0, 2.5))
    for y0, y1 in ((2.9, 3.02), (3.48, 3.62), (3.98, 4.02), (4.38, 4.44)):
        _arrow(ax, (3.0, y0), (3.0, y1))
    ax.plot([3.0, 1.4, 1.4], [2.3, 2.3, 3.8], color=C_RES, lw=2)
    _arrow(ax, (1.4, 3.8), (2.8, 3.8), colour=C_RES, lw=2)
    ax.plot([3.0, 1.2, 1.2], [4.0, 4.0, 5.15], color=C_RES, lw=2)
    _box(ax, 3.0, 5.15, 0.4, 0.35, "+", "white", size=11)
    _arrow(ax, (1.2, 5.15), (2.8, 5.15), colour=C_RES, lw=2)
    _arrow(ax, (3.0, 4.8), (3.0, 4.97))
    _box(ax, 3.0, 5.95, 1.9, 0.4, "final LayerNorm", C_NORM, size=9)
    _box(ax, 3.0, 6.6, 3.9, 0.45, "linear head (tied to W_E) → logits (B, T, V)", C_K, size=9)
    _arrow(ax, (3.0, 5.33), (3.0, 5.75))
    _arrow(ax, (3.0, 6.15), (3.0, 6.37))
    _note(ax, 6.3, 6.6, "softmax of the last position's\nlogits = next-token probabilities", va="center")
    _note(ax, 6.3, 4.2, "pre-LN block: each sublayer reads\nLayerNorm(x) and adds its output\nto the residual stream x",
          va="center")
    _note(ax, 6.3, 2.0, "x: (B, T, d_model) all the way up;\nthe causal mask keeps position t\nfrom reading t + 1, …",
          va="center")
    _note(ax, 6.3, 0.6, "training: cross-entropy against the\ninput shifted left by one (lesson 08)", va="center")
    ax.set_title("GPT (decoder-only), as trained in lesson 09", fontsize=12)
    return fig


ALL_DIAGRAMS = {
    "sdpa_flow": sdpa_flow,
    "mask_in_context": mask_in_context,
    "head_split_merge": head_split_merge,
    "block_pre_post_ln": block_pre_post_ln,
    "three_families": three_families,
    "kv_cache_steps": kv_cache_steps,
    "gpt_stack": gpt_stack,
}
