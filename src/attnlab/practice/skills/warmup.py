"""Lesson 00 warm-ups: softmax of a 3-vector and the shape of Q Kᵀ."""
from __future__ import annotations

import torch

from ._common import Skill, distinct_ints, register, show, softmax_rows


def _softmax_build(rng):
    while True:
        x = distinct_ints(rng, 3, -2, 3)
        if sum(x) != 0:
            break
    prompt = (f"Compute **softmax(x)** for x = {show(x)}. "
              "Give each entry to **2 decimals** as a list (a calculator is fine).")
    return prompt, {"x": x}


register(Skill(
    name="warmup_softmax", lesson="00", title="Softmax of a 3-vector", kind="vector", decimals=2,
    build=_softmax_build, solve=None,
    working=lambda d, m: m.softmax(d["x"]), orders=(lambda d, m: m.softmax_shifted(d["x"]),),
    reference=lambda d: softmax_rows([d["x"]])[0],
    mistakes={
        "normalize_without_exp": lambda d: [v / sum(d["x"]) for v in d["x"]],
        "argmax_lookup": lambda d: [float(v == max(d["x"])) for v in d["x"]],
        "softmax_no_normalise": lambda d: torch.tensor(d["x"], dtype=torch.float64).exp(),
    },
    hints=("Softmax turns scores into positive weights that sum to 1; larger scores get more weight.",
           "Exponentiate every entry, e_i = exp(x_i), then divide each e_i by e_1 + e_2 + e_3."),
))


def _shape_build(rng):
    L, S, d_k = rng.sample([2, 3, 4, 5, 6, 7, 8], 3)
    prompt = (f"Q has shape ({L}, {d_k}) (L = {L} queries) and K has shape ({S}, {d_k}) (S = {S} keys). "
              "What is the shape of the score matrix **Q Kᵀ**? Answer like (2, 3).")
    return prompt, {"L": L, "S": S, "d_k": d_k}


def _shape_reference(d):
    from attnlab.nn import scaled_dot_product_attention

    q = torch.empty(d["L"], d["d_k"], device="meta")  # (L, d_k)
    k = torch.empty(d["S"], d["d_k"], device="meta")  # (S, d_k)
    v = torch.empty(d["S"], 1, device="meta")  # (S, 1)
    _, weights = scaled_dot_product_attention(q, k, v)  # weights: (L, S), the shape of Q Kᵀ
    return tuple(weights.shape)


register(Skill(
    name="warmup_scores_shape", lesson="00", title="Shape of Q Kᵀ", kind="shape",
    build=_shape_build, solve=lambda d: (d["L"], d["S"]), reference=_shape_reference,
    mistakes={
        "qt_k": lambda d: (d["d_k"], d["d_k"]),
        "k_qt": lambda d: (d["S"], d["L"]),
        "cross_shape_swapped": lambda d: (d["S"], d["L"]),
        "scores_as_output": lambda d: (d["L"], d["d_k"]),
    },
    hints=("Kᵀ turns the (S, d_k) key matrix into (d_k, S).",
           "A (m, n) matrix times an (n, p) matrix is (m, p): here m = L, n = d_k, p = S."),
))
