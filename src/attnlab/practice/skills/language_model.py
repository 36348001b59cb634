"""Lesson 09 (capstone GPT): parameter count of a GPT config, batch shapes, loss of a uniform model."""
from __future__ import annotations

import math

import torch

from ._common import Either, Skill, meta_count, register
from .blocks import ffn_params
from .heads import mha_params, one_head_params


def _gpt_build(rng):
    vocab = rng.choice([65, 96, 128, 256, 1000])
    block = rng.choice([32, 64, 128, 256])
    d_model = rng.choice([32, 64, 128])
    n_heads = rng.choice([2, 4, 8])
    n_layers = rng.randint(2, 4)
    prompt = (f"How many parameters does **GPT(GPTConfig(vocab_size={vocab}, block_size={block}, d_model={d_model}, "
              f"n_heads={n_heads}, n_layers={n_layers}))** have? Layout (GPT-2): token embedding (V, d_model); learned "
              "position embedding (block_size, d_model); n_layers pre-LN blocks, each = LayerNorm, causal "
              "multi-head self-attention (4 linear d_model→d_model with biases), LayerNorm, FFN with d_ff = "
              "4·d_model (biases); a final LayerNorm; the output layer shares the token-embedding matrix (weight "
              "tying, no bias). Every LayerNorm has gain and bias.")
    return prompt, {"vocab_size": vocab, "block_size": block, "d_model": d_model, "n_heads": n_heads,
                    "n_layers": n_layers}


def gpt_params(d, *, positions=True, layers=None, bias=True, tied=True, heads=1, norms=True, final_norm=True,
               ln_bias=True, head_bias=False, lost_bias=0, one_head=False, d_ff=None, w_o=True) -> int:
    """Parameter count of the GPT config ``d`` (keys vocab_size, block_size, d_model, n_heads, n_layers):
    embeddings + n_layers blocks (2 LayerNorms, attention, FFN with d_ff = 4·d) + final LayerNorm, the output
    layer tied (GPT-2, Radford et al. 2019). The keywords make the count a named mistake makes: ``lost_bias``
    (biases left out per block), ``d_ff`` (another FFN width), ``w_o=False`` (no output projection), ...
    Returns an int (number of scalar parameters)."""
    dm = d["d_model"]
    ln = (2 * dm if bias and ln_bias else dm) if norms else 0
    attention = mha_params(dm, bias) * heads - (0 if w_o else dm * dm + (dm if bias else 0))
    if one_head:  # W_Q, W_K, W_V of one head (d_model × d_k each) and W_O as if it took one head back
        d_k = dm // d["n_heads"]
        attention = 4 * dm * d_k + (3 * d_k + dm if bias else 0)
    block = 2 * ln + attention + ffn_params(dm, 4 * dm if d_ff is None else d_ff, bias) - lost_bias
    n = d["n_layers"] if layers is None else layers
    return (d["vocab_size"] * dm * (1 if tied else 2) + (d["vocab_size"] if head_bias else 0)
            + (d["block_size"] * dm if positions else 0) + n * block + (ln if final_norm else 0))


def _gpt_reference(d):
    from attnlab.nn import GPT, GPTConfig

    return meta_count(lambda: GPT(GPTConfig(**d)), key=("GPT",) + tuple(sorted(d.items())))[0]


register(Skill(
    name="gpt_param_count", lesson="09", title="GPT parameter count", kind="int",
    build=_gpt_build, reference=_gpt_reference, solve=gpt_params,
    mistakes={
        "forget_position_embedding": lambda d: gpt_params(d, positions=False),
        "forget_layers": lambda d: gpt_params(d, layers=1),
        "params_without_bias": lambda d: gpt_params(d, bias=False),
        "tied_head_counted_twice": lambda d: gpt_params(d, tied=False),
        "params_times_heads": lambda d: gpt_params(d, heads=d["n_heads"]),
        "params_weights_times_heads": lambda d: gpt_params(d) + d["n_layers"] * 4 * d["d_model"] ** 2 * (d["n_heads"] - 1),
        "forget_layernorm_params": lambda d: gpt_params(d, norms=False),
        "final_layernorm_missing": lambda d: gpt_params(d, final_norm=False),
        "layernorm_gain_only": lambda d: gpt_params(d, ln_bias=False),
        "tied_head_bias": lambda d: gpt_params(d, tied=False, head_bias=True),
        "head_bias_added": lambda d: gpt_params(d, head_bias=True),
        # a bias of width d_model (a projection's, b_2) or d_ff = 4·d_model (b_1) left out of every block
        "one_bias_forgotten": lambda d: Either([gpt_params(d, lost_bias=d["d_model"]),
                                                gpt_params(d, lost_bias=4 * d["d_model"])]),
        "ffn_dff_equals_dmodel": lambda d: gpt_params(d, d_ff=d["d_model"]),
        "forget_w_o": lambda d: gpt_params(d, w_o=False),
        "params_one_head": lambda d: Either([gpt_params(d) - d["n_layers"] * (mha_params(d["d_model"]) - one)
                                             for one in one_head_params(d["d_model"], d["n_heads"])]),
        # one of each block's two FFN layers counted (d_ff = 4·d_model): W_2 or W_1 left out of every block
        "ffn_count_one_layer": lambda d: Either([gpt_params(d, lost_bias=4 * d["d_model"] ** 2 + lost)
                                                 for lost in (d["d_model"], 4 * d["d_model"])]),
    },
    hints=("Count embeddings once, one block times n_layers, the final LayerNorm; the tied output layer adds nothing.",
           "V·d + block·d + n_layers·(4d² + 4d + 2·d·4d + 4d + d + 2·2d) + 2d, with d = d_model."),
))

_VOCABS = tuple(range(2, 301)) + (500, 512, 1000, 1024, 4096, 8192, 32000, 32768, 50257, 65536)


def _uniform_build(rng):
    vocab = rng.choice(_VOCABS)
    prompt = (f"An untrained model that gives every one of V = {vocab} tokens the same probability. What is its "
              "**cross-entropy loss** (natural log, as in torch.nn.functional.cross_entropy) to **3 decimals**?")
    return prompt, {"vocab_size": vocab}


def _uniform_reference(d):
    """The loss GPT.forward reports for a model whose weights are all zero (logits 0 = uniform)."""
    from attnlab.nn import GPT, GPTConfig

    model = GPT(GPTConfig(d["vocab_size"], block_size=1, d_model=2, n_heads=1, n_layers=1)).double()
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()  # zero embeddings and tied head: every logit is 0
        _, loss = model(torch.zeros(1, 1, dtype=torch.long), torch.zeros(1, 1, dtype=torch.long))
    return float(loss)


register(Skill(
    name="uniform_loss", lesson="09", title="Loss of a uniform model", kind="number", decimals=3,
    build=_uniform_build, solve=None, working=lambda d, m: m.log(d["vocab_size"]), reference=_uniform_reference,
    mistakes={
        "log2_instead_of_ln": lambda d: math.log2(d["vocab_size"]),
        "log10_instead_of_ln": lambda d: math.log10(d["vocab_size"]),
        "loss_is_probability": lambda d: 1.0 / d["vocab_size"],
        "loss_missing_minus": lambda d: -math.log(d["vocab_size"]),
    },
    hints=("Cross-entropy is −log of the probability given to the right token.",
           "Each token gets probability 1/V, so the loss is −ln(1/V) = ln V."),
))


def _batch_build(rng):
    B, T = rng.sample([2, 4, 8, 12, 16, 24, 32, 48, 64, 128], 2)
    prompt = (f"x, y = get_batch(data, block_size={T}, batch_size={B}). What is the shape of the **targets y**?")
    return prompt, {"B": B, "T": T}


def _batch_reference(d):
    from attnlab.data import get_batch

    data = torch.arange(4 * d["T"])  # any long-enough stream of token ids
    _, y = get_batch(data, d["T"], d["B"], generator=torch.Generator().manual_seed(0))  # (B, T)
    return tuple(y.shape)


register(Skill(
    name="batch_shapes", lesson="09", title="Training batch shapes", kind="shape",
    build=_batch_build, reference=_batch_reference, solve=lambda d: (d["B"], d["T"]),
    mistakes={
        "targets_block_plus_one": lambda d: (d["B"], d["T"] + 1),
        "batch_shape_swapped": lambda d: (d["T"], d["B"]),
        "batch_flattened": lambda d: (d["B"] * d["T"],),
    },
    hints=("Targets line up with inputs: one next-token id per input position.",
           "x and y both have shape (batch_size, block_size)."),
))
