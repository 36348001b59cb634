"""Grading spec for exercise 04 (see autograder/AUTHORING.md). Never released to students.

Inputs are drawn at grading time from a generator the grader seeds with os.urandom;
references come from attnlab.nn and run in the grader, outside the student's sandbox.
"""
import math

import numpy as np
import torch

from attnlab.nn import FeedForward, MultiHeadAttention, SinusoidalPositionalEncoding, causal_mask
from attnlab.nn import sinusoidal_encoding as ref_sinusoidal
from attnlab_grader.judging.spec import ByHandCheck, FunctionCheck

A = "04_positional_encoding"


# ------------------------------------------------------------------ sinusoidal table
def pe_inputs(rng, trial):
    # every other trial uses another base, so ignoring `base` is always caught; trials 0-1 draw
    # d_model = 4k and trials 2-3 d_model = 4k + 2, so a table right at one parity of d_model / 2
    # only (a loop filling two column pairs per step) is always caught
    base = 10000.0 if trial % 2 == 0 else float(rng.uniform(50.0, 5000.0))
    d_model = 4 * int(rng.integers(1, 7)) + (2 if trial >= 2 else 0)
    return {"L": int(rng.integers(3, 41)), "d_model": d_model, "base": base}  # L >= 3: cos(pos) < 0 shows


#: Every branch of the documented ``Raises:`` (``ValueError`` if ``d_model`` is odd or not positive, or
#: ``L < 0``), each tried on every trial: an odd ``d_model``, ``d_model = 0``, a negative even
#: ``d_model``, and ``L = -1``.  A check of one branch only (the odd ``d_model``) is caught.
PE_SETUP = """
def _pe_call(f, I):
    table = f(I['L'], I['d_model'], base=I['base'])
    raised = []
    for bad in ((I['L'], I['d_model'] + 1), (I['L'], 0), (I['L'], -I['d_model']), (-1, I['d_model'])):
        try:
            f(*bad)
            raised.append(False)
        except ValueError:
            raised.append(True)
        except Exception:
            raised.append(False)
    return table, raised
"""


def ref_pe(L, d_model, base):
    return ref_sinusoidal(L, d_model, base=base), [True, True, True, True]


def _table(L, d_model, base, exponent=lambda j: j - j % 2, layout="interleaved", first=0, swap=False):
    """A (possibly wrong) sinusoidal table in numpy, for naming mistakes in feedback."""
    pos = np.arange(first, first + L, dtype=np.float64)[:, None]  # (L, 1)
    cols = np.arange(d_model)
    if layout == "interleaved":
        angles = pos / base ** (np.array([exponent(j) for j in cols]) / d_model)  # (L, d_model)
        sin_cols = cols % 2 == 0
    else:  # first half sines, second half cosines
        half = d_model // 2
        angles = pos / base ** (2 * (cols % half) / d_model)
        sin_cols = cols < half
    if swap:
        sin_cols = ~sin_cols
    return np.where(sin_cols, np.sin(angles), np.cos(angles)), [True, True, True, True]  # meets every Raises branch


PE_MISTAKES = {
    "pe_sin_cos_swapped": lambda L, d_model, base: _table(L, d_model, base, swap=True),
    "pe_pair_exponent": (  # wrong at one parity of column only: odd columns (their own index), even ones (the next)
        lambda L, d_model, base: _table(L, d_model, base, exponent=lambda j: j),
        lambda L, d_model, base: _table(L, d_model, base, exponent=lambda j: j + 1 - j % 2 * 2)),
    "pe_exponent_i_not_2i": lambda L, d_model, base: _table(L, d_model, base, exponent=lambda j: (j - j % 2) / 2),
    "pe_exponent_doubled": lambda L, d_model, base: _table(L, d_model, base, exponent=lambda j: 2 * (j - j % 2)),
    "pe_halves_not_interleaved":
        lambda L, d_model, base: _table(L, d_model, base, layout="halves"),
    "index_from_one": lambda L, d_model, base: _table(L, d_model, base, first=1),
    "pe_base_ignored": lambda L, d_model, base: _table(L, d_model, 10000.0),
    "pe_odd_d_model_not_checked": (lambda L, d_model, base: (ref_pe(L, d_model, base)[0], [False] * 4),
                                   lambda L, d_model, base: (ref_pe(L, d_model, base)[0], [False, True, True, True])),
}


# ------------------------------------------------------------------ permutation equivariance
def equiv_inputs(rng):
    d, L, B = int(rng.choice([4, 6, 8])), int(rng.integers(4, 7)), int(rng.integers(1, 4))
    while True:
        perm = [int(p) for p in rng.permutation(L)]
        inverse = [perm.index(i) for i in range(L)]
        if perm != list(range(L)) and perm != inverse:
            break
    g = lambda *shape: rng.standard_normal(shape) / math.sqrt(shape[0])  # noqa: E731
    return {"x": rng.standard_normal((B, L, d)), "perm": perm, "wq": g(d, d), "wk": g(d, d), "wv": g(d, d),
            "w1": g(d, 2 * d), "w2": g(2 * d, d)}


# The same seven layers as the grader's reference below, written with plain torch for the sandbox
# (attnlab does not exist there). Weights are (in, out) matrices: y = t @ W.
EQUIV_SETUP = """
def _pe_table(L, d):
    pos = torch.arange(L, dtype=torch.float32)[:, None]
    ang = pos / 10000.0 ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
    table = torch.zeros(L, d)
    table[:, 0::2], table[:, 1::2] = torch.sin(ang), torch.cos(ang)
    return table

def _attn(I, t, causal=False, pe=False):
    if pe:
        t = t + _pe_table(t.shape[1], t.shape[2])
    s = (t @ I['wq']) @ (t @ I['wk']).transpose(-2, -1) / math.sqrt(t.shape[-1])
    if causal:
        L = t.shape[1]
        s = s.masked_fill(~torch.ones(L, L, dtype=torch.bool).tril(), float('-inf'))
    return torch.softmax(s, dim=-1) @ (t @ I['wv'])

def _equiv_call(f, I):
    layers = [lambda t: _attn(I, t), lambda t: _attn(I, t, pe=True), lambda t: _attn(I, t, causal=True),
              lambda t: torch.relu(t @ I['w1']) @ I['w2'], lambda t: t.cumsum(dim=1),
              lambda t: t + t.mean(dim=1, keepdim=True), lambda t: t + _attn(I, t, pe=True)]
    return [bool(f(layer, I['x'].clone(), list(I['perm']))) for layer in layers]
"""


def _ref_layers(wq, wk, wv, w1, w2, d):
    mha = MultiHeadAttention(d, 1, bias=False).double()
    ffn = FeedForward(d, 2 * d, bias=False).double()
    pe = SinusoidalPositionalEncoding(d, max_len=16).double()
    with torch.no_grad():
        for lin, w in ((mha.w_q, wq), (mha.w_k, wk), (mha.w_v, wv), (ffn.w_1, w1), (ffn.w_2, w2)):
            lin.weight.copy_(torch.as_tensor(w).T)  # nn.Linear stores (out, in)
        mha.w_o.weight.copy_(torch.eye(d))
    attn = lambda t, mask=None: mha(t, attn_mask=mask)[0]  # noqa: E731
    return [attn, lambda t: attn(pe(t)), lambda t: attn(t, causal_mask(t.shape[1])), ffn,
            lambda t: t.cumsum(dim=1), lambda t: t + t.mean(dim=1, keepdim=True), lambda t: t + attn(pe(t))]


def ref_equiv(x, perm, wq, wk, wv, w1, w2):
    x = torch.as_tensor(x, dtype=torch.float64)
    out = []
    with torch.no_grad():
        for layer in _ref_layers(wq, wk, wv, w1, w2, x.shape[-1]):
            out.append(bool(torch.allclose(layer(x[:, perm]), layer(x)[:, perm], atol=1e-5)))
    return np.array(out)


CHECKS = [
    ByHandCheck("test_pe_by_hand", variable="pe", skill="pe_value"),
    ByHandCheck("test_perm_by_hand", variable="rows", skill="permutation_effect"),
    FunctionCheck(
        "test_sinusoidal_encoding", target="sinusoidal_encoding", inputs=pe_inputs, setup=PE_SETUP,
        call="_pe_call(sinusoidal_encoding, _I)", reference=ref_pe, trials=4, atol=1e-4, rtol=1e-4,
        mistakes=PE_MISTAKES,
        forbid_attrs=("SinusoidalPositionalEncoding",)),
    FunctionCheck(
        "test_is_permutation_equivariant", target="is_permutation_equivariant", inputs=equiv_inputs,
        setup=EQUIV_SETUP, call="_equiv_call(is_permutation_equivariant, _I)", reference=ref_equiv,
        trials=3, atol=0.0, rtol=0.0,
        mistakes={"equivariance_check_never_equal":
                      lambda **raw: np.zeros(7, dtype=bool),
                  "equivariance_check_always_equal":
                      lambda **raw: np.ones(7, dtype=bool)}),
]
