"""Lesson 02: scaled dot-product attention by hand (scores, scale, softmax, A V, all of it)."""
from __future__ import annotations

import math

import torch

from ._common import Skill, f64, ints, register, show, softmax_rows


def _dot(a, b):
    """Dot product of integer rows (exact: a learner writes it down as is)."""
    return sum(x * y for x, y in zip(a, b))


# -------------------------------------------------------------------- scores Q Kᵀ / √d_k


def _scores_build(rng):
    L, S = rng.choice([2, 3]), rng.choice([2, 3])
    while True:
        Q, K = ints(rng, L, 4, -1, 2), ints(rng, S, 4, -1, 2)
        if any(v != 0 for row in (f64(Q) @ f64(K).T).tolist() for v in row):
            break
    prompt = (f"Q = {show(Q)} (L = {L} queries, d_k = 4) and K = {show(K)} (S = {S} keys). "
              "Compute the **scaled scores Q Kᵀ / √d_k** as an L × S matrix, to **2 decimals**.")
    return prompt, {"Q": Q, "K": K}


def _scaled(d, divisor):
    return (f64(d["Q"]) @ f64(d["K"]).T / divisor).tolist()  # (L, d_k) @ (d_k, S) -> (L, S)


def _scores_working(d, m):
    root = m.r(m.sqrt(4))
    return [[m.r(_dot(q, k) / root) for k in d["K"]] for q in d["Q"]]


def _scores_reference(d):
    """The scaled scores, read back from attnlab.nn's attention weights: an extra all-zero key scores
    exactly 0 for every query, so log(w_ij / w_i,zero) = score_ij (the softmax normaliser cancels)."""
    from attnlab.nn import scaled_dot_product_attention

    q, k = f64(d["Q"]), f64(d["K"])  # (L, d_k), (S, d_k)
    k_ref = torch.cat([k, torch.zeros(1, k.shape[1], dtype=k.dtype)])  # (S + 1, d_k)
    _, w = scaled_dot_product_attention(q, k_ref, torch.eye(len(k_ref), dtype=k.dtype))  # w: (L, S + 1)
    return torch.log(w[:, :-1] / w[:, -1:])  # (L, S)


register(Skill(
    name="sdpa_scores", lesson="02", title="Scaled scores Q Kᵀ / √d_k", kind="matrix", decimals=2,
    build=_scores_build, solve=None, working=_scores_working, reference=_scores_reference, tables=("Q", "K"),
    mistakes={
        "no_scale": lambda d: _scaled(d, 1.0),
        "scale_by_dk": lambda d: _scaled(d, 4.0),
        "qt_k": lambda d: (f64(d["Q"]).T @ f64(d["K"])).tolist(),
        "k_qt": lambda d: (f64(d["K"]) @ f64(d["Q"]).T / 2.0).tolist(),
    },
    hints=("Entry (i, j) compares query i with key j.",
           "score[i][j] = (Q[i] · K[j]) / √4 = (Σ_c Q[i][c]·K[j][c]) / 2."),
))

# -------------------------------------------------------------------- row-wise softmax


def _softmax_build(rng):
    while True:
        scores = ints(rng, 2, 3, -2, 2)
        if all(sum(r) != 0 and len(set(r)) > 1 for r in scores) and any(
                len({scores[0][j], scores[1][j]}) > 1 for j in range(3)):
            break
    prompt = (f"These are already-scaled attention scores, one row per query: S = {show(scores)}. "
              "Compute the **attention weights softmax(S)** (row by row) to **2 decimals**.")
    return prompt, {"scores": scores}


def _col_softmax(d):
    return softmax_rows(f64(d["scores"]).T.tolist()).T  # softmax down each column


register(Skill(
    name="sdpa_softmax_row", lesson="02", title="Row-wise softmax of scores", kind="matrix", decimals=2,
    build=_softmax_build, solve=None, working=lambda d, m: [m.softmax(row) for row in d["scores"]],
    orders=(lambda d, m: [m.softmax_shifted(row) for row in d["scores"]],),
    reference=lambda d: softmax_rows(d["scores"]), tables=("scores",),
    mistakes={
        "softmax_wrong_axis": _col_softmax,
        "normalize_without_exp": lambda d: [[v / sum(r) for v in r] for r in d["scores"]],
        "softmax_no_normalise": lambda d: f64(d["scores"]).exp(),
        "argmax_lookup": lambda d: [[float(v == max(r)) for v in r] for r in d["scores"]],
        "softmax_global_sum": lambda d: f64(d["scores"]).exp() / f64(d["scores"]).exp().sum(),
    },
    hints=("Each query's weights must sum to 1 across the keys.",
           "For every row separately: exponentiate each entry, then divide by that row's sum of exponentials."),
))

# -------------------------------------------------------------------- output A V

_ROWS = [(0.5, 0.5), (0.25, 0.75), (0.75, 0.25), (0.2, 0.8), (0.8, 0.2), (0.1, 0.9), (0.9, 0.1), (0.4, 0.6),
         (0.6, 0.4), (0.3, 0.7), (0.7, 0.3)]


def _av_build(rng):
    while True:
        A = [list(rng.choice(_ROWS)), list(rng.choice(_ROWS))]
        V = ints(rng, 2, 2, 0, 4)
        if A[0] != A[1] and A[0][1] != A[1][0] and V[0] != V[1] and V[0][1] != V[1][0]:
            break
    prompt = (f"The attention weights are A = {show(A)} (row i = query i) and the values are V = {show(V)} "
              "(row j = value of key j). Compute the **output A V** to **2 decimals**.")
    return prompt, {"A": A, "V": V}


def _av_reference(d):
    from attnlab.nn import scaled_dot_product_attention

    logits = torch.log(f64(d["A"]))  # softmax(log A) = A because rows of A sum to 1
    out, _ = scaled_dot_product_attention(logits * math.sqrt(2), torch.eye(2, dtype=torch.float64), f64(d["V"]))
    return out  # (2, 2)


register(Skill(
    name="sdpa_output", lesson="02", title="Attention output A V", kind="matrix", decimals=2,
    build=_av_build, solve=None, working=lambda d, m: [m.mix(a, d["V"]) for a in d["A"]],
    reference=_av_reference, tables=("A", "V"),
    mistakes={
        "av_transposed": lambda d: (f64(d["A"]).T @ f64(d["V"])).tolist(),
        "av_v_transposed": lambda d: (f64(d["A"]) @ f64(d["V"]).T).tolist(),
        "va_instead_of_av": lambda d: (f64(d["V"]) @ f64(d["A"])).tolist(),
        "lookup_ignores_weights": lambda d: [f64(d["V"]).mean(0).tolist()] * 2,
    },
    hints=("Output row i is a weighted average of the value rows, using row i of A.",
           "out[i] = A[i][0]·V[0] + A[i][1]·V[1] (each V[j] is a row vector)."),
))

# -------------------------------------------------------------------- the whole formula


def _full_build(rng):
    while True:
        Q, K, V = ints(rng, 2, 2, 0, 2), ints(rng, 2, 2, 0, 2), ints(rng, 2, 2, 0, 4)
        s = (f64(Q) @ f64(K).T)
        # symmetric Q Kᵀ would make the column softmax equal Aᵀ (two mistakes alike)
        gaps = s[:, 0] - s[:, 1]  # equal gaps would give both queries the same weights
        if V[0] != V[1] and bool((gaps != 0).all()) and gaps[0] != gaps[1] and s[0, 1] != s[1, 0]:
            break
    prompt = (f"Compute **softmax(Q Kᵀ / √d_k) V** for Q = {show(Q)}, K = {show(K)}, V = {show(V)} "
              "(d_k = 2). Give the 2 × 2 output to **2 decimals**.")
    return prompt, {"Q": Q, "K": K, "V": V}


def _full_working(d, m, shift=False):
    """softmax(Q Kᵀ / √2) V by hand; ``shift``: each row's softmax as exp(s − max s) (the same weights)."""
    root = m.r(m.sqrt(2))
    scores = [[m.r(_dot(q, k) / root) for k in d["K"]] for q in d["Q"]]  # (L, S)
    weights = [m.softmax_shifted(row) if shift else m.softmax(row) for row in scores]  # (L, S)
    return [m.mix(w, d["V"]) for w in weights]  # (L, d_v)


def _full_working_scaled_first(d, m, side="Q", shift=False):
    """The same formula with the queries (or the keys) divided by √d_k before the dot products."""
    root = m.r(m.sqrt(2))
    Q = [[m.r(x / root) for x in q] for q in d["Q"]] if side == "Q" else d["Q"]
    K = [[m.r(x / root) for x in k] for k in d["K"]] if side == "K" else d["K"]
    scores = [[m.r(sum(x * y for x, y in zip(q, k, strict=True))) for k in K] for q in Q]  # (L, S)
    weights = [m.softmax_shifted(row) if shift else m.softmax(row) for row in scores]  # (L, S)
    return [m.mix(w, d["V"]) for w in weights]  # (L, d_v)


def _full_reference(d):
    from attnlab.nn import scaled_dot_product_attention

    out, _ = scaled_dot_product_attention(f64(d["Q"]), f64(d["K"]), f64(d["V"]))
    return out


_SQRT_DK = math.sqrt(2)  # the right divisor √d_k of sdpa_full's problems (d_k = 2)


def _full_wrong(d, divisor=_SQRT_DK, column_softmax=False):
    s = f64(d["Q"]) @ f64(d["K"]).T / divisor  # (L, S)
    w = s.softmax(dim=0 if column_softmax else -1)
    return (w @ f64(d["V"])).tolist()


def _hard(d):
    """All the weight on each query's best key (None when two keys tie for it)."""
    s = f64(d["Q"]) @ f64(d["K"]).T  # (L, S)
    if any(len(set(row)) < len(row) and max(row) == sorted(row)[-2] for row in s.tolist()):
        return None
    return (torch.nn.functional.one_hot(s.argmax(-1), s.shape[-1]).double() @ f64(d["V"])).tolist()


def _linear(d):
    """The scaled scores divided by their row sums (no exp) times V (None when a row sums to 0)."""
    s = f64(d["Q"]) @ f64(d["K"]).T / math.sqrt(2)  # (L, S)
    total = s.sum(-1, keepdim=True)
    return None if bool((total == 0).any()) else ((s / total) @ f64(d["V"])).tolist()


register(Skill(
    name="sdpa_full", lesson="02", title="Scaled dot-product attention by hand", kind="matrix", decimals=2,
    build=_full_build, solve=None, working=_full_working, reference=_full_reference, tables=("Q", "K", "V"),
    orders=(_full_working_scaled_first, lambda d, m: _full_working_scaled_first(d, m, "K"),
            lambda d, m: _full_working(d, m, shift=True),
            lambda d, m: _full_working_scaled_first(d, m, "Q", shift=True),
            lambda d, m: _full_working_scaled_first(d, m, "K", shift=True)),
    mistakes={
        "no_scale": lambda d: _full_wrong(d, 1.0),
        "scale_by_dk": lambda d: _full_wrong(d, 2.0),
        "softmax_wrong_axis": lambda d: _full_wrong(d, column_softmax=True),
        "av_transposed": lambda d: (softmax_rows((f64(d["Q"]) @ f64(d["K"]).T / math.sqrt(2)).tolist()).T
                                    @ f64(d["V"])).tolist(),
        "k_qt": lambda d: (softmax_rows((f64(d["K"]) @ f64(d["Q"]).T / math.sqrt(2)).tolist())
                           @ f64(d["V"])).tolist(),
        "softmax_no_normalise": lambda d: ((f64(d["Q"]) @ f64(d["K"]).T / math.sqrt(2)).exp() @ f64(d["V"])).tolist(),
        "lookup_ignores_weights": lambda d: [f64(d["V"]).mean(0).tolist()] * 2,
        "av_v_transposed": lambda d: (softmax_rows((f64(d["Q"]) @ f64(d["K"]).T / math.sqrt(2)).tolist())
                                      @ f64(d["V"]).T).tolist(),
        "argmax_lookup": lambda d: _hard(d),
        "normalize_without_exp": lambda d: _linear(d),
        "va_instead_of_av": lambda d: (f64(d["V"]) @ softmax_rows((f64(d["Q"]) @ f64(d["K"]).T
                                                                   / math.sqrt(2)).tolist())).tolist(),
    },
    hints=("Three steps: scores, softmax per row, weighted average of values.",
           "S = Q Kᵀ / √2; A = softmax of each row of S; output = A V."),
))

# -------------------------------------------------------------------- the scale factor

_D_MODELS = (32, 48, 64, 96, 128, 192, 256, 320, 384, 512, 640, 768, 1024, 1280)


def _scale_build(rng):
    d_model = rng.choice(_D_MODELS)
    # d_k² = d_model would make "divide by d_k" and "divide by √d_model" give the same number
    n_heads = rng.choice([h for h in (2, 3, 4, 6, 8, 12, 16, 20) if d_model % h == 0 and d_model // h > 4
                          and (d_model // h) ** 2 != d_model])
    prompt = (f"Multi-head attention with d_model = {d_model} and n_heads = {n_heads}. Inside each head, the "
              "scores Q Kᵀ are divided by which number? Give it to **2 decimals**.")
    return prompt, {"d_model": d_model, "n_heads": n_heads}


def _scale_reference(d):
    from attnlab.nn import split_heads

    x = torch.empty(1, 1, d["d_model"], device="meta")  # (B, L, d_model)
    d_k = split_heads(x, d["n_heads"]).shape[-1]  # (B, H, L, d_k)
    return math.sqrt(d_k)


register(Skill(
    name="sdpa_scale", lesson="02", title="The scale factor √d_k", kind="number", decimals=2,
    build=_scale_build, solve=None, working=lambda d, m: m.sqrt(d["d_model"] // d["n_heads"]),
    reference=_scale_reference,
    mistakes={
        "scale_by_d_model": lambda d: math.sqrt(d["d_model"]),
        "scale_by_dk": lambda d: d["d_model"] / d["n_heads"],
        "no_scale": lambda d: 1.0,
        "scale_by_sqrt_heads": lambda d: math.sqrt(d["n_heads"]),
    },
    hints=("The scale depends on the width of the vectors that are dot-multiplied inside one head.",
           "d_k = d_model / n_heads; divide by √d_k."),
))
