"""Grading spec for exercise 02 (see autograder/AUTHORING.md). Never released to students.

Inputs are drawn at grading time from a generator the grader seeds with os.urandom;
references come from attnlab.nn and run in the grader, outside the student's sandbox.
"""
import math

import numpy as np
import torch

from attnlab.nn import scaled_dot_product_attention as ref_sdpa
from attnlab_grader.spec import ByHandCheck, FunctionCheck

A = "02_scaled_dot_product_attention"


def t64(x):
    return torch.as_tensor(x, dtype=torch.float64)


# ------------------------------------------------------------------ inputs
def qk_inputs(rng, trial):
    """Trial 0: (B, L, d); trial 1: with a head axis (B, H, L, d), H >= 2 and L != S, so a
    fixed-axis ``k.transpose(1, 2)`` fails; trial 2: no batch axis (L, d)."""
    L, S, d = int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(2, 9))
    lead = [(int(rng.integers(1, 4)),), (int(rng.integers(1, 3)), int(rng.integers(2, 4))), ()][trial % 3]
    if trial == 1 and S == L:
        S = L + 1
    return {"q": rng.standard_normal(lead + (L, d)), "k": rng.standard_normal(lead + (S, d))}


def softmax_inputs(rng, trial):
    shape = tuple(int(n) for n in rng.integers(2, 6, size=rng.integers(2, 4)))
    x = rng.standard_normal(shape) * float(rng.choice([1.0, 40.0]))
    dim = int(rng.integers(-len(shape), len(shape)))
    if trial == 0:  # one logit above 88.7: exp() overflows in float32 unless the max is subtracted first
        x.flat[int(rng.integers(x.size))] = float(rng.uniform(100.0, 120.0))
    if trial == 1:  # not the last axis: catches a softmax over the last axis whatever `dim` says
        dim = int(rng.integers(0, len(shape) - 1))
    if trial == 2:  # the last axis, given as -1: catches a softmax over a fixed other axis
        dim = -1
    return {"x": x, "dim": dim}


def sdpa_inputs(rng, trial):
    """Trial 0 without a mask; later trials with a mask that blocks at least one key of a row
    and keeps at least one key in every row."""
    B, H, L, S = (int(n) for n in rng.integers(1, 4, size=4) + np.array([0, 0, 1, 1]))
    d_k, d_v = int(rng.integers(2, 9)), int(rng.integers(2, 9))
    mask = None
    if trial > 0:
        mask = rng.random((B, 1, L, S)) < 0.6
        keep = int(rng.integers(S))
        mask[..., keep] = True  # every query row keeps at least one key
        mask[0, 0, int(rng.integers(L)), (keep + 1 + int(rng.integers(S - 1))) % S] = False  # S >= 2
    return {"q": rng.standard_normal((B, H, L, d_k)), "k": rng.standard_normal((B, H, S, d_k)),
            "v": rng.standard_normal((B, H, S, d_v)), "mask": mask}


# ------------------------------------------------------------------ references and known mistakes
def ref_scores(q, k, divisor=None):
    d = q.shape[-1]
    return t64(q) @ t64(k).transpose(-2, -1) / (math.sqrt(d) if divisor is None else divisor(d))


def ref_softmax(x, dim, shift=True):
    return t64(x).softmax(dim=dim)


def sdpa_ref(q, k, v, mask):
    return ref_sdpa(t64(q), t64(k), t64(v), None if mask is None else torch.as_tensor(mask))


def sdpa_mask_after(q, k, v, mask):
    out, w = ref_sdpa(t64(q), t64(k), t64(v))
    if mask is not None:
        w = w.masked_fill(~torch.as_tensor(mask), 0.0)
    return w @ t64(v), w


def sdpa_unscaled(q, k, v, mask):
    return ref_sdpa(t64(q) * math.sqrt(q.shape[-1]), t64(k), t64(v), None if mask is None else torch.as_tensor(mask))


CHECKS = [
    ByHandCheck("test_scores_by_hand", variable="scores", skill="sdpa_scores"),
    ByHandCheck("test_weights_by_hand", variable="weights", skill="sdpa_softmax_row"),
    ByHandCheck("test_output_by_hand", variable="output", skill="sdpa_output"),
    FunctionCheck(
        "test_attention_scores", target="attention_scores", inputs=qk_inputs, trials=3,
        call="attention_scores(_I['q'], _I['k'])", reference=ref_scores,
        mistakes={"no_scale": lambda q, k: ref_scores(q, k, lambda d: 1.0),
                  "scale_by_dk": lambda q, k: ref_scores(q, k, lambda d: d)},
        forbid_attrs=("scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention"),
        forbid_ops=("scaled_dot_product",)),
    FunctionCheck(
        "test_softmax", target="softmax", inputs=softmax_inputs,
        call="softmax(_I['x'], dim=_I['dim'])", reference=ref_softmax, trials=4, atol=1e-4,
        mistakes={"softmax_ignores_dim": lambda x, dim: ref_softmax(x, -1)},
        forbid_attrs=("softmax", "log_softmax", "softmin"), forbid_ops=("softmax",)),
    FunctionCheck(
        "test_sdpa", target="scaled_dot_product_attention", inputs=sdpa_inputs,
        call="scaled_dot_product_attention(_I['q'], _I['k'], _I['v'], mask=_I['mask'])",
        reference=sdpa_ref, trials=3, atol=1e-4,
        mistakes={"mask_after_softmax": sdpa_mask_after, "no_scale": sdpa_unscaled},
        forbid_attrs=("scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention"),
        forbid_ops=("scaled_dot_product",)),
]
