"""Grading spec for exercise 03 (see autograder/AUTHORING.md). Never released to students."""
import numpy as np
import torch

from attnlab.nn import causal_mask as ref_causal
from attnlab.nn import combine_masks as ref_combine
from attnlab.nn import padding_mask as ref_padding
from autograder.spec import ByHandCheck, FunctionCheck, Wrong

A = "03_masks"


def causal_inputs(rng, trial):
    """Trial 0: square, default S; 1: S > L (KV-cache alignment); 2: 16 < L <= 64 and 3: L > 64,
    so a mask sliced from a fixed-size buffer (16x16, 64x64) fails."""
    L = int(rng.integers(1, 8))
    if trial == 0:
        return {"L": int(rng.integers(2, 8)), "S": None}  # square, default S
    if trial == 1:
        return {"L": L, "S": L + int(rng.integers(1, 4))}  # KV-cache alignment
    if trial == 2:
        L = int(rng.integers(17, 65))
        return {"L": L, "S": L + int(rng.integers(0, 4))}
    return {"L": int(rng.integers(65, 130)), "S": None}


def padding_inputs(rng, trial):
    """Trial 1 passes a list; trial 2 pads every sequence (max length < S) and has B = 1 or
    B = S, so S taken from the lengths or a missing batch axis shows."""
    B, S = int(rng.integers(2, 5)), int(rng.integers(3, 9))
    if trial == 2:
        B = int(rng.choice([1, S]))
    lengths = rng.integers(1, S + 1, size=B)
    lengths[0] = int(rng.integers(1, S))  # at least one padded sequence
    if trial == 2:
        lengths = rng.integers(1, S, size=B)
    return {"lengths": lengths if trial != 1 else [int(n) for n in lengths], "S": S}


def combine_inputs(rng):
    """Three masks that disagree so that OR, dropping any one mask, or stopping at None differ."""
    B, L, S = int(rng.integers(1, 5)), int(rng.integers(2, 5)), int(rng.integers(2, 5))
    a, b, c = rng.random((L, S)) < 0.6, rng.random((B, 1, S)) < 0.6, rng.random((B, L, 1)) < 0.8
    a[0, 0], b[0, 0, 0] = False, True  # AND and OR differ
    a[0, S - 1], b[0, 0, S - 1], c[0, 0, 0] = True, False, True  # without b: differs at [0, 0, S-1]
    a[L - 1, 0], c[0, L - 1, 0] = True, False  # without c: differs at [0, L-1, 0]
    return {"a": a, "b": b, "c": c}


def future_inputs(rng):
    L = int(rng.integers(5, 9))
    return {"L": L, "t": int(rng.integers(1, L - 2))}


def _lengths(lengths):
    return torch.as_tensor(np.asarray(lengths))


# toy attentions handed to the student's sees_future inside the sandbox (plain torch only)
FUTURE_SETUP = """
def _toy(mask_fn):
    def attention(x):
        L = x.shape[1]
        scores = x @ x.transpose(1, 2) / x.shape[-1] ** 0.5
        allowed = mask_fn(L)
        if allowed is not None:
            scores = scores.masked_fill(~allowed, float("-inf"))
        return scores.softmax(dim=-1) @ x
    return attention
_causal_attn = _toy(lambda L: torch.ones(L, L, dtype=torch.bool).tril())
_full_attn = _toy(lambda L: None)
_peek_one = _toy(lambda L: torch.ones(L, L, dtype=torch.bool).tril(1))
"""

CHECKS = [
    ByHandCheck("test_causal_by_hand", cell="causal_by_hand", variable="causal", skill="causal_mask_build",
                key=f"{A}/test_causal_by_hand"),
    ByHandCheck("test_padding_by_hand", cell="padding_by_hand", variable="padding", skill="padding_mask_build",
                key=f"{A}/test_padding_by_hand"),
    FunctionCheck(
        "test_causal_mask", target="causal_mask", inputs=causal_inputs, trials=4,
        call="causal_mask(_I['L'], _I['S'])",
        reference=lambda L, S: ref_causal(L, S),
        mistakes={"the diagonal is excluded (a query must see itself)":
                  lambda L, S: torch.ones(L, S or L, dtype=torch.bool).tril((S or L) - L - 1),
                  "inverted polarity (True must mean 'may attend')": lambda L, S: ~ref_causal(L, S),
                  "with S > L the triangle is not shifted to the last L positions": lambda L, S: torch.ones(L, S or L, dtype=torch.bool).tril()},
        forbid_attrs=("causal_mask",)),
    FunctionCheck(
        "test_padding_mask", target="padding_mask", inputs=padding_inputs, trials=3,
        call="padding_mask(_I['lengths'], _I['S'])",
        reference=lambda lengths, S: ref_padding(_lengths(lengths), S),
        mistakes={"inverted polarity (True must mean 'real token')": lambda lengths, S: ~ref_padding(_lengths(lengths), S)},
        forbid_attrs=("padding_mask",)),
    FunctionCheck(
        "test_combine_masks", target="combine_masks", inputs=combine_inputs, trials=3,
        call="(combine_masks(_I['a'], None, _I['b'], _I['c']), combine_masks(None, None), combine_masks(_I['a']))",
        reference=lambda a, b, c: (ref_combine(torch.as_tensor(a), torch.as_tensor(b), torch.as_tensor(c)), None,
                                   torch.as_tensor(a)),
        mistakes={"masks combined with OR instead of AND": lambda a, b, c: (torch.as_tensor(a) | torch.as_tensor(b) | torch.as_tensor(c), None, torch.as_tensor(a))},
        forbid_attrs=("combine_masks",)),
    FunctionCheck(
        "test_sees_future", target="sees_future", inputs=future_inputs, trials=3, setup=FUTURE_SETUP,
        call="[sees_future(_causal_attn, L=_I['L'], t=_I['t']), sees_future(_full_attn, L=_I['L'], t=_I['t']),"
             " sees_future(_peek_one, L=_I['L'], t=_I['t'])]",
        reference=lambda L, t: [False, True, True]),
]

_CAUSAL = '''
def causal_mask(L, S=None, device=None):
    """Causal mask."""
    S = L if S is None else S
    return {expr}
'''
_PAD = '''
def padding_mask(lengths, S):
    """Padding mask."""
    lengths = torch.as_tensor(lengths)
    return {expr}
'''
_FUTURE = '''
def sees_future(attention, L=6, d_model=4, t=2):
    """Perturbation test."""
    x = torch.randn(2, L, d_model)
    changed = x.clone()
{perturb}
    before, after = attention(x){sl}, attention(changed){sl}
    return not torch.allclose(before, after, atol=1e-6)
'''

WRONG = {
    "causal_without_diagonal": Wrong("causal_mask", ("test_causal_mask",), _CAUSAL.format(
        expr="torch.ones(L, S, dtype=torch.bool).tril(diagonal=S - L - 1)")),
    "causal_inverted": Wrong("causal_mask", ("test_causal_mask",), _CAUSAL.format(
        expr="torch.ones(L, S, dtype=torch.bool).triu(diagonal=S - L + 1)")),
    "causal_transposed": Wrong("causal_mask", ("test_causal_mask",), _CAUSAL.format(
        expr="torch.ones(L, S, dtype=torch.bool).triu(diagonal=S - L)")),
    "causal_kv_misaligned": Wrong("causal_mask", ("test_causal_mask",), _CAUSAL.format(
        expr="torch.ones(L, S, dtype=torch.bool).tril()")),
    "causal_float": Wrong("causal_mask", ("test_causal_mask",), _CAUSAL.format(
        expr="torch.ones(L, S).tril(diagonal=S - L)")),
    "padding_inverted": Wrong("padding_mask", ("test_padding_mask",), _PAD.format(
        expr="torch.arange(S)[None, :] >= lengths[:, None]")),
    "padding_off_by_one": Wrong("padding_mask", ("test_padding_mask",), _PAD.format(
        expr="torch.arange(S)[None, :] <= lengths[:, None]")),
    "combine_with_or": Wrong("combine_masks", ("test_combine_masks",), '''
def combine_masks(*masks):
    """OR."""
    result = None
    for m in masks:
        if m is not None:
            result = m if result is None else result | m
    return result
'''),
    "combine_forgets_none": Wrong("combine_masks", ("test_combine_masks",), '''
def combine_masks(*masks):
    """Fails on None."""
    result = masks[0]
    for m in masks[1:]:
        result = result & m
    return result
'''),
    "future_perturbs_only_last": Wrong("sees_future", ("test_sees_future",), _FUTURE.format(
        perturb="    changed[:, -1] = torch.randn(2, d_model)", sl="[:, : t + 1]")),
    "future_compares_all_positions": Wrong("sees_future", ("test_sees_future",), _FUTURE.format(
        perturb="    changed[:, t + 1:] = torch.randn(2, L - t - 1, d_model)", sl="")),
    "future_perturbs_the_past": Wrong("sees_future", ("test_sees_future",), _FUTURE.format(
        perturb="    changed[:, : t + 1] = torch.randn(2, t + 1, d_model)", sl="[:, t + 1:]")),
    "by_hand_causal_without_diagonal": Wrong("causal_by_hand", ("test_causal_by_hand",), mistake="causal_excludes_diagonal"),
    "by_hand_causal_inverted": Wrong("causal_by_hand", ("test_causal_by_hand",), mistake="inverted_mask"),
    "by_hand_padding_inverted": Wrong("padding_by_hand", ("test_padding_by_hand",), mistake="inverted_mask"),
}
