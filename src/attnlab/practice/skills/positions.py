"""Lesson 04: sinusoidal positional encoding values and why attention needs positions."""
from __future__ import annotations

import math

import torch

from ._common import Skill, register, show


def _pe_build(rng):
    d_model = rng.choice([4, 6, 8])
    pos = rng.randint(1, 60)  # wide enough that two learners rarely share a value
    col = rng.randrange(4)  # the fast-rotating columns: the later ones are ~1 or ~0 at small positions
    prompt = (f"Sinusoidal positional encoding with d_model = {d_model}: compute **PE[pos = {pos}, column {col}]** "
              "(columns counted from 0; angles in radians) to **3 decimals**.")
    return prompt, {"d_model": d_model, "pos": pos, "col": col}


def _pe_working(d, m, exponent_col=None, swap=False, degrees=False):
    pair = d["col"] - d["col"] % 2 if exponent_col is None else exponent_col
    denominator = m.r(10000 ** (pair / d["d_model"])) if pair else 1
    angle = m.r(d["pos"] / denominator)
    if degrees:
        angle = angle * math.pi / 180
    use_sin = (d["col"] % 2 == 0) != swap
    return m.sin(angle) if use_sin else m.cos(angle)


def _pe_reference(d):
    from attnlab.nn import sinusoidal_encoding

    return float(sinusoidal_encoding(d["pos"] + 1, d["d_model"])[d["pos"], d["col"]])


def _pe_halves(d):
    """The value with the sines in the first d_model / 2 columns and the cosines in the rest (not interleaved):
    column c < d/2 is sin(pos / 10000^(2c/d)), column c >= d/2 is cos(pos / 10000^(2(c − d/2)/d))."""
    half = d["d_model"] // 2
    c = d["col"]
    if c < half:
        return math.sin(d["pos"] / 10000 ** (2 * c / d["d_model"]))
    return math.cos(d["pos"] / 10000 ** (2 * (c - half) / d["d_model"]))


def _exact(fn):
    from ..working import EXACT

    return lambda d: fn(d, EXACT)


register(Skill(
    name="pe_value", lesson="04", title="Sinusoidal encoding value", kind="number", decimals=3,
    build=_pe_build, solve=None, working=_pe_working, reference=_pe_reference,
    mistakes={
        "pe_sin_cos_swapped": _exact(lambda d, m: _pe_working(d, m, swap=True)),
        "pe_pair_exponent": lambda d: None if d["col"] % 2 == 0 else _exact(
            lambda d, m: _pe_working(d, m, exponent_col=d["col"]))(d),
        "angle_in_degrees": _exact(lambda d, m: _pe_working(d, m, degrees=True)),
        "pe_halves_not_interleaved": lambda d: None if d["col"] == 0 else _pe_halves(d),
    },
    hints=("Even columns use sine, odd columns cosine; the pair (2i, 2i+1) shares one frequency.",
           "angle = pos / 10000^(2i / d_model) with 2i = column rounded down to even; "
           "PE = sin(angle) for even columns, cos(angle) for odd ones."),
))


def _perm_build(rng):
    n = rng.choice([5, 6, 7])  # 94 to 4 942 permutations that are not their own inverse
    while True:
        perm = rng.sample(range(n), n)
        inverse = [perm.index(i) for i in range(n)]
        if perm != inverse:
            break
    prompt = (f"X has {n} rows (tokens). Permute them: X' = X[π] with π = {show(perm)}, i.e. row r of X' is row "
              "π[r] of X. Run self-attention **without positional encoding**: Y = Attn(X, X, X) and "
              f"Y' = Attn(X', X', X'). For r = 0 .. {n - 1}, row r of Y' equals which row of Y? Answer as a list of "
              f"{n} row indices.")
    return prompt, {"perm": perm, "seed": rng.randrange(2**31)}


def _perm_reference(d):
    from attnlab.nn import scaled_dot_product_attention

    perm = d["perm"]
    x = torch.randn(len(perm), 4, generator=torch.Generator().manual_seed(d["seed"]), dtype=torch.float64)
    y, _ = scaled_dot_product_attention(x, x, x)  # (n, 4)
    yp, _ = scaled_dot_product_attention(x[perm], x[perm], x[perm])  # (n, 4)
    return [int((y - row).abs().sum(-1).argmin()) for row in yp]  # which row of Y each row of Y' matches


register(Skill(
    name="permutation_effect", lesson="04", title="Permutation equivariance without positions", kind="int_list",
    build=_perm_build, solve=lambda d: list(d["perm"]), reference=_perm_reference,
    mistakes={
        "inverse_permutation": lambda d: [d["perm"].index(i) for i in range(len(d["perm"]))],
        "permutation_invariant": lambda d: list(range(len(d["perm"]))),
        "index_from_one": lambda d: [p + 1 for p in d["perm"]],
    },
    hints=("Without positions, attention only sees a set of tokens: permuting the inputs permutes the outputs "
           "the same way.",
           "Equivariance: Attn(X[π]) = Attn(X)[π]. Read off which row of Y sits at row r of Y[π]."),
))
