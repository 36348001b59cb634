"""Lesson 06: the Transformer block: FFN and block parameter counts, LayerNorm by hand."""
from __future__ import annotations

import torch

from ._common import Either, Skill, f64, meta_count, register, show
from .heads import mha_params, one_head_params

_WIDTHS = (16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)


def _ffn_build(rng):
    d_model = rng.choice(_WIDTHS)
    d_ff = d_model * rng.choice([2, 3, 4, 4, 8])
    prompt = (f"How many parameters does the position-wise **FeedForward(d_model={d_model}, d_ff={d_ff})** have "
              "(two nn.Linear layers with biases)?")
    return prompt, {"d_model": d_model, "d_ff": d_ff}


def ffn_params(d_model: int, d_ff: int, bias: bool = True) -> int:
    """W_1: d_model·d_ff (+ d_ff biases); W_2: d_ff·d_model (+ d_model biases)."""
    return 2 * d_model * d_ff + ((d_ff + d_model) if bias else 0)


def _ffn_reference(d):
    from attnlab.nn import FeedForward

    return meta_count(lambda: FeedForward(d["d_model"], d["d_ff"]), key=("FeedForward",) + tuple(sorted(d.items())))[0]


register(Skill(
    name="ffn_param_count", lesson="06", title="Feed-forward parameter count", kind="int",
    build=_ffn_build, reference=_ffn_reference, solve=lambda d: ffn_params(d["d_model"], d["d_ff"]),
    mistakes={
        "params_without_bias": lambda d: ffn_params(d["d_model"], d["d_ff"], bias=False),
        "ffn_dff_equals_dmodel": lambda d: ffn_params(d["d_model"], d["d_model"]),
        "ffn_count_one_layer": lambda d: d["d_model"] * d["d_ff"] + d["d_ff"],
        "one_bias_forgotten": lambda d: Either([ffn_params(d["d_model"], d["d_ff"]) - d["d_model"],  # b_2
                                                ffn_params(d["d_model"], d["d_ff"]) - d["d_ff"]]),  # b_1
    },
    hints=("Count each linear layer as weights plus biases.",
           "W_1: d_model·d_ff + d_ff; W_2: d_ff·d_model + d_model."),
))


def _block_build(rng):
    d_model = 8 * rng.randint(2, 128)  # 16 .. 1024: every n_heads below divides it
    n_heads = rng.choice([h for h in (2, 4, 8) if d_model % h == 0])
    d_ff = d_model * rng.choice([2, 3, 4])
    prompt = (f"How many parameters does **EncoderBlock(d_model={d_model}, n_heads={n_heads}, d_ff={d_ff})** have? "
              "It holds multi-head self-attention (W_Q, W_K, W_V, W_O with biases), the feed-forward network "
              "(two linear layers with biases) and two LayerNorms (gain and bias each).")
    return prompt, {"d_model": d_model, "n_heads": n_heads, "d_ff": d_ff}


def block_params(d_model: int, d_ff: int, *, bias: bool = True, w_o: bool = True, norms: bool = True,
                 heads: int = 1, ln_bias: bool = True, lost_bias: int = 0) -> int:
    """Attention (4 projections) + FFN + two LayerNorms (2·d each); the keywords leave parts out."""
    attention = mha_params(d_model, bias) * (3 if not w_o else 4) // 4 * heads
    ln = 2 * d_model if bias and ln_bias else d_model
    return attention + ffn_params(d_model, d_ff, bias) + (2 * ln if norms else 0) - lost_bias


def _block_reference(d):
    from attnlab.nn import EncoderBlock

    return meta_count(lambda: EncoderBlock(d["d_model"], d["n_heads"], d["d_ff"]),
                      key=("EncoderBlock",) + tuple(sorted(d.items())))[0]


register(Skill(
    name="block_param_count", lesson="06", title="Encoder block parameter count", kind="int",
    build=_block_build, reference=_block_reference, solve=lambda d: block_params(d["d_model"], d["d_ff"]),
    mistakes={
        "forget_w_o": lambda d: block_params(d["d_model"], d["d_ff"], w_o=False),
        "forget_layernorm_params": lambda d: block_params(d["d_model"], d["d_ff"], norms=False),
        "params_without_bias": lambda d: block_params(d["d_model"], d["d_ff"], bias=False),
        "ffn_dff_equals_dmodel": lambda d: block_params(d["d_model"], d["d_model"]),
        "params_times_heads": lambda d: block_params(d["d_model"], d["d_ff"], heads=d["n_heads"]),
        "params_weights_times_heads": lambda d: block_params(d["d_model"], d["d_ff"])
        + 4 * d["d_model"] ** 2 * (d["n_heads"] - 1),
        "layernorm_gain_only": lambda d: block_params(d["d_model"], d["d_ff"], ln_bias=False),
        "one_bias_forgotten": lambda d: Either([block_params(d["d_model"], d["d_ff"], lost_bias=d["d_model"]),
                                                block_params(d["d_model"], d["d_ff"], lost_bias=d["d_ff"])]),
        "params_one_head": lambda d: Either(
            [block_params(d["d_model"], d["d_ff"]) - mha_params(d["d_model"]) + one
             for one in one_head_params(d["d_model"], d["n_heads"])]),
        # one of the FFN's two layers counted: W_2 left out (d_ff·d_model + d_model), or W_1 (d_model·d_ff + d_ff)
        "ffn_count_one_layer": lambda d: Either([block_params(d["d_model"], d["d_ff"], lost_bias=lost) for lost in
                                                 (d["d_ff"] * d["d_model"] + d["d_model"],
                                                  d["d_model"] * d["d_ff"] + d["d_ff"])]),
    },
    hints=("Add up three parts: attention, feed-forward, and the two LayerNorms.",
           "Attention 4·d² + 4·d; FFN 2·d·d_ff + d_ff + d; LayerNorms 2 × 2·d (d = d_model)."),
))


def _ln_build(rng):
    while True:
        x = [rng.randint(0, 8) for _ in range(4)]
        if len(set(x)) >= 3 and sum(x) != 0:
            break
    prompt = (f"Apply **LayerNorm** (gain 1, bias 0, ignore ε) to the vector x = {show(x)}. "
              "Give the 4 outputs to **2 decimals**.")
    return prompt, {"x": x}


def _ln_working(d, m):
    x = d["x"]
    mu = m.r(sum(x) / len(x))
    dev = [m.r(v - mu) for v in x]
    var = m.r(sum((m.r(e * e) for e in dev), 0.0) / len(x))
    sd = m.r(m.sqrt(var))
    return [m.r(e / sd) for e in dev]


def _ln_working_mean_of_squares(d, m):
    """The same LayerNorm with the variance as mean(x²) − μ² (another order of the same sums)."""
    x = d["x"]
    mu = m.r(sum(x) / len(x))
    var = m.r(m.r(sum((m.r(v * v) for v in x), 0.0) / len(x)) - m.r(mu * mu))
    sd = m.r(m.sqrt(var))
    return [m.r(m.r(v - mu) / sd) for v in x]


def _ln(x, unbiased=False, center=True, divide_by_var=False):
    x = f64(x)
    mu = x.mean() if center else 0.0
    return (x - mu) / (x.var(unbiased=unbiased) if divide_by_var else x.std(unbiased=unbiased))


register(Skill(
    name="layernorm_by_hand", lesson="06", title="LayerNorm by hand", kind="vector", decimals=2,
    build=_ln_build, solve=None, working=_ln_working, orders=(_ln_working_mean_of_squares,),
    reference=lambda d: torch.nn.functional.layer_norm(f64(d["x"]), (4,), eps=1e-12),
    mistakes={
        "layernorm_unbiased_var": lambda d: _ln(d["x"], unbiased=True),
        "layernorm_no_center": lambda d: _ln(d["x"], center=False),
        "layernorm_divide_by_variance": lambda d: _ln(d["x"], divide_by_var=True),
    },
    hints=("Normalise the vector to mean 0 and standard deviation 1.",
           "μ = mean(x); σ² = mean((x − μ)²) (divide by 4, not 3); output = (x − μ) / σ."),
))
