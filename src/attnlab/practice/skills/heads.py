"""Lesson 05: multi-head attention shapes, head splitting/merging by hand, parameter count."""
from __future__ import annotations

import torch

from ._common import Either, Skill, f64, meta_count, register, show


def _trace_build(rng):
    while True:
        B = rng.randint(2, 8)
        L = rng.choice([5, 7, 9, 10, 12, 16])
        d_model = rng.choice([32, 48, 64, 96, 128, 256])
        heads = [h for h in (2, 3, 4, 6, 8) if d_model % h == 0 and d_model // h not in (B, L) and h not in (B, L)]
        if heads:
            break
    n_heads = rng.choice(heads)
    prompt = (f"x has shape (B, L, d_model) = ({B}, {L}, {d_model}). What is the shape of "
              f"**split_heads(x, n_heads={n_heads})**, the layout each head's attention runs on? Answer like (2, 3, 4, 5).")
    return prompt, {"B": B, "L": L, "d_model": d_model, "n_heads": n_heads}


def _trace_reference(d):
    from attnlab.nn import split_heads

    return tuple(split_heads(torch.empty(d["B"], d["L"], d["d_model"], device="meta"), d["n_heads"]).shape)


register(Skill(
    name="mha_shape_trace", lesson="05", title="Head-split shape trace", kind="shape",
    build=_trace_build, reference=_trace_reference,
    solve=lambda d: (d["B"], d["n_heads"], d["L"], d["d_model"] // d["n_heads"]),
    mistakes={
        "reshape_without_transpose": lambda d: (d["B"], d["L"], d["n_heads"], d["d_model"] // d["n_heads"]),
        "split_keeps_dmodel": lambda d: (d["B"], d["n_heads"], d["L"], d["d_model"]),
        "split_forgets_heads": lambda d: (d["B"], d["L"], d["d_model"] // d["n_heads"]),
    },
    hints=("Each head works on its own (L, d_k) slice, and heads are a batch-like axis.",
           "(B, L, d_model) -> view (B, L, H, d_k) with d_k = d_model / H -> transpose(1, 2) -> (B, H, L, d_k)."),
))


def _scores_build(rng):
    while True:
        B, L = rng.randint(2, 8), rng.randint(5, 32)  # wide: two learners rarely share a shape
        cross = rng.random() < 0.5
        S = rng.choice([s for s in range(6, 41) if s != L]) if cross else L
        d_model = rng.choice([32, 48, 64, 96, 128])
        heads = [h for h in (2, 3, 4, 6, 8)
                 if d_model % h == 0 and len({B, L, S, h, d_model // h}) == (4 if S == L else 5)]
        if heads:
            break
    n_heads = rng.choice(heads)
    where = (f"cross-attention: the queries come from a decoder input of shape (B, L, d_model) = ({B}, {L}, {d_model}) "
             f"and the keys and values from an encoder output of shape (B, S, d_model) = ({B}, {S}, {d_model})"
             if cross else f"self-attention on x of shape (B, L, d_model) = ({B}, {L}, {d_model})")
    prompt = (f"In MultiHeadAttention(d_model={d_model}, n_heads={n_heads}), {where}. After the projections and "
              "split_heads, what is the shape of the **scores Q Kᵀ / √d_k** (and of the attention weights)? "
              "Answer like (2, 3, 4, 5).")
    return prompt, {"B": B, "L": L, "S": S, "d_model": d_model, "n_heads": n_heads}


def _scores_reference(d):
    from attnlab.nn import scaled_dot_product_attention, split_heads

    q = split_heads(torch.zeros(d["B"], d["L"], d["d_model"]), d["n_heads"])  # (B, H, L, d_k)
    kv = split_heads(torch.zeros(d["B"], d["S"], d["d_model"]), d["n_heads"])  # (B, H, S, d_k)
    _, weights = scaled_dot_product_attention(q, kv, kv)  # weights: (B, H, L, S), the scores' shape
    return tuple(weights.shape)


register(Skill(
    name="mha_scores_shape", lesson="05", title="Attention-score shape inside multi-head attention", kind="shape",
    build=_scores_build, reference=_scores_reference,
    solve=lambda d: (d["B"], d["n_heads"], d["L"], d["S"]),
    kinds=("self-attention", "cross-attention"),
    kind_of_data=lambda d: "self-attention" if d["S"] == d["L"] else "cross-attention",
    mistakes={
        "scores_without_head_axis": lambda d: (d["B"], d["L"], d["S"]),
        "scores_keys_first": lambda d: (d["B"], d["n_heads"], d["S"], d["L"]) if d["S"] != d["L"] else None,
        "cross_shape_swapped": lambda d: (d["B"], d["n_heads"], d["S"], d["L"]) if d["S"] != d["L"] else None,
        "scores_as_output": lambda d: (d["B"], d["n_heads"], d["L"], d["d_model"] // d["n_heads"]),
        "keys_length_from_queries": lambda d: (d["B"], d["n_heads"], d["L"], d["L"]) if d["S"] != d["L"] else None,
        "reshape_without_transpose": lambda d: (d["B"], d["L"], d["n_heads"], d["S"]),
    },
    hints=("Each head compares every query with every key, batch by batch.",
           "Q: (B, H, L, d_k) and Kᵀ: (B, H, d_k, S), so Q Kᵀ is (B, H, L, S): one row per query, one column per key."),
))


def _split_build(rng):
    x = [rng.sample(range(10), 4) for _ in range(2)]
    head = rng.randrange(2)
    prompt = (f"x = {show(x)} is one sequence (L = 2 tokens, d_model = 4). Split it into n_heads = 2 heads "
              f"(d_k = 2). Give **head {head}'s (L, d_k) matrix**, i.e. split_heads(x[None], 2)[0, {head}].")
    return prompt, {"x": x, "head": head}


def _split_reference(d):
    from attnlab.nn import split_heads

    return split_heads(f64([d["x"]]), 2)[0, d["head"]]  # (1, L, d_model) -> (1, H, L, d_k) -> (L, d_k)


register(Skill(
    name="split_heads_values", lesson="05", title="Split heads by hand", kind="matrix",
    build=_split_build, tables=("x",), reference=_split_reference,
    solve=lambda d: [row[2 * d["head"]: 2 * d["head"] + 2] for row in d["x"]],
    mistakes={
        "reshape_without_transpose": lambda d: f64(d["x"]).reshape(2, 2, 2)[d["head"]],
        "heads_interleaved": lambda d: [row[d["head"]::2] for row in d["x"]],
        "index_from_one": lambda d: [row[2 * (1 - d["head"]): 2 * (1 - d["head"]) + 2] for row in d["x"]],
    },
    hints=("Head h owns a contiguous block of d_k columns of every token.",
           "Head h = columns h·d_k .. (h+1)·d_k − 1 of x, for every row (token)."),
))


def _merge_build(rng):
    heads = [[rng.sample(range(10), 2) for _ in range(2)] for _ in range(2)]
    prompt = (f"Two heads produced outputs (each L = 2 tokens × d_k = 2): head 0 = {show(heads[0])}, head 1 = "
              f"{show(heads[1])}. Give **merge_heads** of them for this sequence: the (L, d_model = 4) matrix.")
    return prompt, {"heads": heads}


def _merge_reference(d):
    from attnlab.nn import merge_heads

    return merge_heads(f64([d["heads"]]))[0]  # (1, H, L, d_k) -> (1, L, d_model) -> (L, d_model)


register(Skill(
    name="merge_heads_values", lesson="05", title="Merge heads by hand", kind="matrix",
    build=_merge_build, reference=_merge_reference,
    solve=lambda d: [d["heads"][0][t] + d["heads"][1][t] for t in range(2)],
    mistakes={
        "heads_wrong_order": lambda d: [d["heads"][1][t] + d["heads"][0][t] for t in range(2)],
        "reshape_without_transpose": lambda d: f64(d["heads"]).reshape(2, 4),
        "merge_stacks_rows": lambda d: d["heads"][0] + d["heads"][1],
    },
    hints=("Each token's row is rebuilt from its row in every head, side by side.",
           "Row t = [head 0 row t, head 1 row t] (head 0's d_k numbers first)."),
))

#: Every multiple of 8 from 16 to 1024: 127 widths, so two learners rarely draw the same count.
_WIDTHS = tuple(range(16, 1025, 8))


def _mha_count_build(rng):
    d_model = rng.choice(_WIDTHS)
    n_heads = rng.choice([h for h in (2, 4, 8, 16) if d_model % h == 0 and d_model // h >= 4])
    bias = rng.random() < 0.75
    prompt = (f"How many parameters does **MultiHeadAttention(d_model={d_model}, n_heads={n_heads}, bias={bias})** "
              "have? (Projections W_Q, W_K, W_V, W_O, each nn.Linear(d_model, d_model).)")
    return prompt, {"d_model": d_model, "n_heads": n_heads, "bias": bias}


def mha_params(d_model: int, bias: bool = True) -> int:
    """Four d_model -> d_model projections: 4·d² weights (+ 4·d biases)."""
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def one_head_params(d_model: int, n_heads: int, bias: bool = True) -> Either:
    """The counts of the mistake ``params_one_head`` (one head's d_model × d_k matrices W_Q, W_K, W_V and a
    d_k × d_model W_O taken for the whole layer), with the biases counted each way a learner does: one head's
    (3·d_k + d_model), the layer's full ones (4·d_model), or none (bias=False: none only)."""
    d_k = d_model // n_heads
    weights = 4 * d_model * d_k
    if not bias:
        return Either([weights])
    return Either([weights + 3 * d_k + d_model, weights + 4 * d_model, weights])


def _mha_reference(d):
    from attnlab.nn import MultiHeadAttention

    return meta_count(lambda: MultiHeadAttention(d["d_model"], d["n_heads"], bias=d["bias"]),
                      key=("MultiHeadAttention",) + tuple(sorted(d.items())))[0]


register(Skill(
    name="mha_param_count", lesson="05", title="Multi-head attention parameter count", kind="int",
    build=_mha_count_build, reference=_mha_reference, solve=lambda d: mha_params(d["d_model"], d["bias"]),
    mistakes={
        "params_without_bias": lambda d: mha_params(d["d_model"], False) if d["bias"] else None,
        "forget_w_o": lambda d: mha_params(d["d_model"], d["bias"]) * 3 // 4,
        "params_times_heads": lambda d: mha_params(d["d_model"], d["bias"]) * d["n_heads"],
        "params_weights_times_heads": lambda d: 4 * d["d_model"] ** 2 * d["n_heads"],
        "count_bias_when_disabled": lambda d: mha_params(d["d_model"], True) if not d["bias"] else None,
        "one_bias_forgotten": lambda d: mha_params(d["d_model"], True) - d["d_model"] if d["bias"] else None,
        "params_one_head": lambda d: one_head_params(d["d_model"], d["n_heads"], d["bias"]),
    },
    hints=("The number of heads does not change the count: the heads split d_model, they do not add width.",
           "4 linear maps d_model -> d_model: 4·d_model² weights, plus 4·d_model biases if bias=True."),
))
