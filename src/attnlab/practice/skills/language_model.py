"""Lesson 09 (capstone GPT): parameter count of a GPT config, batch shapes, loss of a uniform model."""
from __future__ import annotations

import math

import torch

from ._common import Skill, bias_count, meta_count, register


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


def _gpt(d):
    from attnlab.nn import GPT, GPTConfig

    return meta_count(lambda: GPT(GPTConfig(**d)),
                      key=("GPT",) + tuple(sorted(d.items())))


def _one_layer(d):
    total, model = _gpt(d)
    per_block = sum(p.numel() for p in model.blocks[0].parameters())
    return total - (d["n_layers"] - 1) * per_block


register(Skill(
    name="gpt_param_count", lesson="09", title="GPT parameter count", kind="int",
    build=_gpt_build, solve=lambda d: _gpt(d)[0],
    mistakes={
        "forget_position_embedding": lambda d: _gpt(d)[0] - d["block_size"] * d["d_model"],
        "forget_layers": _one_layer,
        "params_without_bias": lambda d: _gpt(d)[0] - bias_count(_gpt(d)[1]),
    },
    hints=("Count embeddings once, one block times n_layers, the final LayerNorm; the tied output layer adds nothing.",
           "V·d + block·d + n_layers·(4d² + 4d + 2·d·4d + 4d + d + 2·2d) + 2d, with d = d_model."),
))


def _uniform_build(rng):
    vocab = rng.choice([2, 10, 26, 50, 65, 100, 256, 1000, 50257])
    prompt = (f"An untrained model that gives every one of V = {vocab} tokens the same probability. What is its "
              "**cross-entropy loss** (natural log, as in torch.nn.functional.cross_entropy) to **3 decimals**?")
    return prompt, {"vocab_size": vocab}


def _uniform(d):
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
    build=_uniform_build, solve=_uniform,
    mistakes={"log2_instead_of_ln": lambda d: math.log2(d["vocab_size"])},
    hints=("Cross-entropy is −log of the probability given to the right token.",
           "Each token gets probability 1/V, so the loss is −ln(1/V) = ln V."),
))


def _batch_build(rng):
    B, T = rng.sample([4, 8, 12, 16, 32, 64], 2)
    prompt = (f"x, y = get_batch(data, block_size={T}, batch_size={B}). What is the shape of the **targets y**?")
    return prompt, {"B": B, "T": T}


def _batch(d):
    from attnlab.data import get_batch

    data = torch.arange(4 * d["T"])  # any long-enough stream of token ids
    _, y = get_batch(data, d["T"], d["B"], generator=torch.Generator().manual_seed(0))  # (B, T)
    return tuple(y.shape)


register(Skill(
    name="batch_shapes", lesson="09", title="Training batch shapes", kind="shape",
    build=_batch_build, solve=_batch,
    mistakes={
        "targets_block_plus_one": lambda d: (d["B"], d["T"] + 1),
        "batch_shape_swapped": lambda d: (d["T"], d["B"]),
    },
    hints=("Targets line up with inputs: one next-token id per input position.",
           "x and y both have shape (batch_size, block_size)."),
))
