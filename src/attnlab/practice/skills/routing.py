"""Lesson 01 (the routing problem): soft lookup and path lengths RNN / CNN / attention."""
from __future__ import annotations

import math

import torch

from ._common import Skill, f64, ints, register, show


def _lookup_build(rng, with_values: bool):
    while True:  # a query in halves: the scores are exact halves, and many more weight vectors differ
        q = [rng.choice([-1, -0.5, 0, 0.5, 1, 1.5, 2]) for _ in range(2)]
        keys = ints(rng, 3, 2, -1, 2)
        scores = [q[0] * k[0] + q[1] * k[1] for k in keys]
        if len(set(scores)) == 3 and sum(scores) != 0 and sum(s != 0 for s in scores) >= 2:
            break
    data = {"q": q, "K": keys}
    prompt = (f"Soft lookup with query q = {show(q)} and keys (one per row) K = {show(keys)}. "
              "The match score of key j is the plain dot product q · k_j and the weights are the softmax of "
              "the three scores. ")
    if with_values:
        while True:
            data["V"] = ints(rng, 3, 2, 1, 4)
            if len({tuple(row) for row in data["V"]}) == 3:  # distinct values keep the mistakes apart
                break
        prompt += (f"The values (one per row) are V = {show(data['V'])}. "
                   "Give the **output** (the weighted average of the value rows) to **2 decimals**.")
    else:
        prompt += "Give the three **weights** to **2 decimals**."
    return prompt, data


def _lookup_reference(d):
    from attnlab.nn import scaled_dot_product_attention

    q = f64([d["q"]]) * math.sqrt(2)  # (1, 2): × √d_k cancels the 1/√d_k inside attention
    k = f64(d["K"])  # (3, 2)
    v = f64(d["V"]) if "V" in d else torch.eye(3, dtype=torch.float64)  # (3, d_v)
    out, weights = scaled_dot_product_attention(q, k, v)  # (1, d_v), (1, 3)
    return out[0] if "V" in d else weights[0]


def _scores(d):
    """Plain dot products q · k_j (halves: written down exactly)."""
    return [d["q"][0] * k[0] + d["q"][1] * k[1] for k in d["K"]]


def _weights(d, m):
    return m.softmax(_scores(d))


def _output(d, m):
    return m.mix(_weights(d, m), d["V"])


def _onehot(d):
    s = _scores(d)
    return [float(v == max(s)) for v in s]


def _mix(d, w):
    return (f64([w]) @ f64(d["V"]))[0]


def _scaled_weights(d):
    return f64(_scores(d)).div(math.sqrt(2)).softmax(-1)


_LOOKUP_HINTS = ("Score each key against the query first, then turn the three scores into weights that sum to 1.",
                 "score_j = q[0]·k_j[0] + q[1]·k_j[1]; weight_j = exp(score_j) / Σ_i exp(score_i)")

register(Skill(
    name="soft_lookup_weights", lesson="01", title="Soft lookup: weights", kind="vector", decimals=2,
    build=lambda rng: _lookup_build(rng, False), solve=None, working=_weights, reference=_lookup_reference,
    orders=(lambda d, m: m.softmax_shifted(_scores(d)),),
    mistakes={
        "normalize_without_exp": lambda d: [s / sum(_scores(d)) for s in _scores(d)],
        "argmax_lookup": _onehot,
        "softmax_wrong_axis": lambda d: [1.0, 1.0, 1.0],
        "scaled_lookup": _scaled_weights,
        "softmax_no_normalise": lambda d: [math.exp(s) for s in _scores(d)],
    },
    hints=_LOOKUP_HINTS,
))

register(Skill(
    name="soft_lookup_output", lesson="01", title="Soft lookup: output", kind="vector", decimals=2,
    build=lambda rng: _lookup_build(rng, True), solve=None, working=_output, reference=_lookup_reference,
    orders=(lambda d, m: m.mix(m.softmax_shifted(_scores(d)), d["V"]),),
    mistakes={
        "argmax_lookup": lambda d: _mix(d, _onehot(d)),
        "softmax_wrong_axis": lambda d: _mix(d, [1.0, 1.0, 1.0]),
        "normalize_without_exp": lambda d: _mix(d, [s / sum(_scores(d)) for s in _scores(d)]),
        "scaled_lookup": lambda d: _mix(d, _scaled_weights(d).tolist()),
        "softmax_no_normalise": lambda d: _mix(d, [math.exp(s) for s in _scores(d)]),
        "lookup_ignores_weights": lambda d: f64(d["V"]).mean(0),
        "lookup_mixes_keys": lambda d: (f64(_scores(d)).softmax(-1)[None] @ f64(d["K"]))[0],  # Σ_j w_j k_j
    },
    hints=("The output is a weighted average of the value rows, with the softmax weights.",
           _LOOKUP_HINTS[1] + "; output = Σ_j weight_j · v_j (row vector of length 2)."),
))


def _path_build(rng):
    n = rng.randint(6, 120)  # wide enough that two learners rarely share an answer
    k = rng.choice([3, 4, 5])
    prompt = (f"A sequence has n = {n} tokens. How many sequential steps does information need to travel from "
              f"the first token to the last one in (a) an RNN (one recurrent step per token), (b) a stack of causal "
              f"convolutions with kernel size {k} (count layers), (c) causal self-attention (count layers)? "
              "Answer as a list [a, b, c].")
    return prompt, {"n": n, "kernel": k}


def _steps(connect: torch.Tensor) -> int:
    """Layers until the last position is connected to the first (boolean matrix powers)."""
    reach = connect.clone()
    steps = 1
    while not bool(reach[-1, 0]):
        reach = (reach.float() @ connect.float()) > 0  # one more layer / step
        steps += 1
    return steps


def _path_reference(d):
    from attnlab.nn import causal_mask

    n, k = d["n"], d["kernel"]
    causal = causal_mask(n)  # (n, n): attention connects every earlier token in one layer
    band = lambda w: causal & torch.ones(n, n, dtype=torch.bool).triu(-(w - 1))  # noqa: E731  j in [i-w+1, i]
    return [_steps(band(2)), _steps(band(k)), _steps(causal)]


register(Skill(
    name="path_lengths", lesson="01", title="Path lengths: RNN, CNN, attention", kind="int_list",
    build=_path_build, reference=_path_reference,
    solve=lambda d: [d["n"] - 1, math.ceil((d["n"] - 1) / (d["kernel"] - 1)), 1],
    mistakes={
        "path_counts_tokens": lambda d: [d["n"], math.ceil((d["n"] - 1) / (d["kernel"] - 1)), 1],
        "cnn_reach_k": lambda d: [d["n"] - 1, math.ceil((d["n"] - 1) / d["kernel"]), 1],
        "cnn_floor_division": lambda d: [d["n"] - 1, (d["n"] - 1) // (d["kernel"] - 1), 1],
        "attention_no_shortcut": lambda d: [d["n"] - 1, math.ceil((d["n"] - 1) / (d["kernel"] - 1)), d["n"] - 1],
    },
    hints=("An RNN moves one position per step; a kernel-k convolution reaches k − 1 positions back per layer; "
           "attention connects any two positions directly.",
           "RNN: n − 1 steps. CNN: ceil((n − 1) / (k − 1)) layers. Attention: 1 layer."),
))
