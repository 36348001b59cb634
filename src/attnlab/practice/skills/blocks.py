"""Lesson 06: the Transformer block: FFN and block parameter counts, LayerNorm by hand."""
from __future__ import annotations

import torch

from ._common import Skill, bias_count, f64, meta_count, register, show


def _ffn_build(rng):
    d_model = rng.choice([16, 32, 64, 128, 256, 512])
    d_ff = d_model * rng.choice([2, 4, 4, 8])
    prompt = (f"How many parameters does the position-wise **FeedForward(d_model={d_model}, d_ff={d_ff})** have "
              "(two nn.Linear layers with biases)?")
    return prompt, {"d_model": d_model, "d_ff": d_ff}


def _ffn(d, d_ff=None):
    from attnlab.nn import FeedForward

    return meta_count(lambda: FeedForward(d["d_model"], d_ff or d["d_ff"]),
                      key=("FeedForward",) + tuple(sorted(d.items())) + (d_ff,))


register(Skill(
    name="ffn_param_count", lesson="06", title="Feed-forward parameter count", kind="int",
    build=_ffn_build, solve=lambda d: _ffn(d)[0],
    mistakes={
        "params_without_bias": lambda d: _ffn(d)[0] - bias_count(_ffn(d)[1]),
        "ffn_dff_equals_dmodel": lambda d: _ffn(d, d["d_model"])[0],
    },
    hints=("Count each linear layer as weights plus biases.",
           "W_1: d_model·d_ff + d_ff; W_2: d_ff·d_model + d_model."),
))


def _block_build(rng):
    d_model = rng.choice([16, 32, 64, 128, 256])
    n_heads = rng.choice([h for h in (2, 4, 8) if d_model % h == 0])
    d_ff = d_model * rng.choice([2, 4])
    prompt = (f"How many parameters does **EncoderBlock(d_model={d_model}, n_heads={n_heads}, d_ff={d_ff})** have? "
              "It holds multi-head self-attention (W_Q, W_K, W_V, W_O with biases), the feed-forward network "
              "(two linear layers with biases) and two LayerNorms (gain and bias each).")
    return prompt, {"d_model": d_model, "n_heads": n_heads, "d_ff": d_ff}


def _block(d):
    from attnlab.nn import EncoderBlock

    return meta_count(lambda: EncoderBlock(d["d_model"], d["n_heads"], d["d_ff"]),
                      key=("EncoderBlock",) + tuple(sorted(d.items())))


def _part(d, name):
    return sum(p.numel() for n, p in _block(d)[1].named_parameters() if n.startswith(name))


register(Skill(
    name="block_param_count", lesson="06", title="Encoder block parameter count", kind="int",
    build=_block_build, solve=lambda d: _block(d)[0],
    mistakes={
        "forget_w_o": lambda d: _block(d)[0] - _part(d, "self_attn.w_o."),
        "forget_layernorm_params": lambda d: _block(d)[0] - _part(d, "norm"),
        "params_without_bias": lambda d: _block(d)[0] - bias_count(_block(d)[1]),
        "ffn_dff_equals_dmodel": lambda d: _block(d)[0] - _part(d, "ffn.") + _ffn(d, d["d_model"])[0],
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


def _ln(x, unbiased=False, center=True):
    x = f64(x)
    mu = x.mean() if center else 0.0
    return (x - mu) / x.std(unbiased=unbiased)


register(Skill(
    name="layernorm_by_hand", lesson="06", title="LayerNorm by hand", kind="vector", decimals=2,
    build=_ln_build,
    solve=lambda d: torch.nn.functional.layer_norm(f64(d["x"]), (4,), eps=1e-12),
    mistakes={
        "layernorm_unbiased_var": lambda d: _ln(d["x"], unbiased=True),
        "layernorm_no_center": lambda d: _ln(d["x"], center=False),
    },
    hints=("Normalise the vector to mean 0 and standard deviation 1.",
           "μ = mean(x); σ² = mean((x − μ)²) (divide by 4, not 3); output = (x − μ) / σ."),
))
