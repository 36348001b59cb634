"""Grading spec for exercise 02 (see autograder/AUTHORING.md). Never released to students.

Inputs are drawn at grading time from a generator the grader seeds with os.urandom;
references come from attnlab.nn and run in the grader, outside the student's sandbox.
"""
import math

import numpy as np
import torch

from attnlab.nn import scaled_dot_product_attention as ref_sdpa
from attnlab_grader.judging.spec import ByHandCheck, FunctionCheck, Verdict, compare_values, mistake_verdict

A = "02_scaled_dot_product_attention"


def t64(x):
    return torch.as_tensor(x, dtype=torch.float64)


# ------------------------------------------------------------------ inputs
def qk_inputs(rng, trial):
    """Trial 0: (B, L, d); trial 1: with a head axis (B, H, L, d), H >= 2 and L != S, so a
    fixed-axis ``k.transpose(1, 2)`` fails; trial 2: no batch axis (L, d).  The sizes of the
    axes differ from each other (L != S != d != B, H), so a scale or transpose taken from
    another axis than the last one shows."""
    L, S, d, B, H = (int(n) for n in rng.permutation(np.arange(1, 9))[:5])
    if d == 1:  # d = 1 hides the scale: swap it with another size
        d, L = L, d
    lead = [(B,), (B, max(H, 2) if max(H, 2) != d else 2 + (d == 2)), ()][trial % 3]
    return {"q": rng.standard_normal(lead + (L, d)), "k": rng.standard_normal(lead + (S, d))}


def softmax_inputs(rng, trial):
    shape = tuple(int(n) for n in rng.integers(2, 6, size=rng.integers(2, 4)))
    x = rng.standard_normal(shape) * float(rng.choice([1.0, 40.0]))
    dim = int(rng.integers(-len(shape), len(shape)))
    if trial == 0:  # one logit above 710: exp() overflows in float32 and float64 unless the max is subtracted
        # first; a second one 0.5 to 3 below it in the same slice along dim: clamped logits would tie;
        # a third one 20 to 60 below zero in that slice (forced to hold at least 3): subtracting the
        # minimum instead of the maximum leaves a difference above 770, which overflows too
        if shape[dim] < 3:
            shape = shape[:dim % len(shape)] + (int(rng.integers(3, 6)),) + shape[dim % len(shape) + 1:]
            x = rng.standard_normal(shape) * float(rng.choice([1.0, 40.0]))
        at = list(np.unravel_index(int(rng.integers(x.size)), shape))
        big = float(rng.uniform(750.0, 800.0))
        x[tuple(at)] = big
        second, third = (at[dim] + 1 + rng.permutation(shape[dim] - 1)[:2]) % shape[dim]
        at[dim] = int(second)
        x[tuple(at)] = big - float(rng.uniform(0.5, 3.0))
        at[dim] = int(third)
        x[tuple(at)] = -float(rng.uniform(20.0, 60.0))
    if trial == 1:  # not the last axis: catches a softmax over the last axis whatever `dim` says
        dim = int(rng.integers(0, len(shape) - 1))
    if trial == 2:  # the last axis, given as -1: catches a softmax over a fixed other axis
        dim = -1
    if trial == 3:  # masked scores: about a third of the entries -inf (never a whole slice along dim); the
        # contract gives them probability 0, and a shift by the minimum or -inf replaced by 0 shows
        blocked = rng.random(shape) < 0.35
        along = np.moveaxis(blocked, dim, -1)  # a view: writes reach `blocked`
        keep = int(rng.integers(shape[dim]))
        along[..., keep] = False
        along[(0,) * (along.ndim - 1) + ((keep + 1) % shape[dim],)] = True  # at least one -inf
        x = np.where(blocked, -np.inf, x)
    return {"x": x, "dim": dim}


def sdpa_inputs(rng, trial):
    """Trial 0 without a mask; later trials with a mask that blocks at least one key of a row
    and keeps at least one key in every row.  Trial 3 sets ``dropout_p`` (0.2-0.3) on at least 80
    weights, with ``v`` the identity so that the output *is* the weights after dropout (see
    :class:`DropoutCheck`); the other trials pass ``dropout_p=0.0`` (dropout left on shows)."""
    B, H, L, S = (int(n) for n in rng.integers(1, 4, size=4) + np.array([0, 0, 1, 1]))
    d_k, d_v = (int(n) for n in rng.permutation(np.arange(2, 9))[:2])  # d_v != d_k: a scale by √d_v shows
    dropout_p = 0.0
    if trial == 3:
        B, H, L, S = 2, 2, int(rng.integers(4, 7)), int(rng.integers(5, 9))
        dropout_p = float(rng.uniform(0.2, 0.3))
    mask = None
    if trial in (1, 2):
        mask = rng.random((B, 1, L, S)) < 0.6
        keep = int(rng.integers(S))
        mask[..., keep] = True  # every query row keeps at least one key
        mask[0, 0, int(rng.integers(L)), (keep + 1 + int(rng.integers(S - 1))) % S] = False  # S >= 2
    v = rng.standard_normal((B, H, S, d_v)) if trial != 3 else np.broadcast_to(np.eye(S), (B, H, S, S)).copy()
    return {"q": rng.standard_normal((B, H, L, d_k)), "k": rng.standard_normal((B, H, S, d_k)),
            "v": v, "mask": mask, "dropout_p": dropout_p}


# ------------------------------------------------------------------ references and known mistakes
def ref_scores(q, k, divisor=None):
    d = q.shape[-1]
    return t64(q) @ t64(k).transpose(-2, -1) / (math.sqrt(d) if divisor is None else divisor(d))


def ref_softmax(x, dim, shift=True):
    return t64(x).softmax(dim=dim)


def softmax_no_shift(dtype):
    """exp(x) without the max shift, computed in ``dtype``: inf / inf = NaN where exp overflows."""
    def model(x, dim):
        e = torch.as_tensor(x, dtype=dtype).exp()
        return (e / e.sum(dim=dim, keepdim=True)).to(torch.float64)
    return model


def softmax_global_shift(x, dim):
    """exp(x - max of the whole tensor) in float32 (as the student's tensors are): slices far below
    the global maximum underflow to 0 / 0."""
    x = torch.as_tensor(x, dtype=torch.float32)
    e = (x - x.max()).exp()
    return (e / e.sum(dim=dim, keepdim=True)).to(torch.float64)


def softmax_over(axis):
    """The softmax taken over ``axis`` whatever ``dim`` asks (a model of ``softmax_wrong_axis``);
    not this mistake where ``axis`` is ``dim`` itself, nor where it is the last axis (a softmax that
    always takes the last axis is ``softmax_ignores_dim``)."""
    def model(x, dim):
        if axis % np.ndim(x) in (dim % np.ndim(x), np.ndim(x) - 1):
            raise ValueError("the asked axis, or the last one")
        return ref_softmax(x, axis)
    return model


def sdpa_softmax_over(axis):
    """Attention whose weights are normalised over ``axis`` instead of the key axis (-1): over the
    queries (-2), or over the batch or head axis (a softmax written for one fixed axis)."""
    def model(q, k, v, mask, dropout_p=0.0):
        s = ref_scores(q, k)
        if mask is not None:
            s = s.masked_fill(~torch.as_tensor(mask), float("-inf"))
        w = ref_softmax(s, axis)
        return w @ t64(v), w
    return model


def sdpa_ref(q, k, v, mask, dropout_p=0.0):
    """attnlab's attention without dropout (a dropout trial is judged by :class:`DropoutCheck`)."""
    return ref_sdpa(t64(q), t64(k), t64(v), None if mask is None else torch.as_tensor(mask))


def sdpa_mask_after(q, k, v, mask, dropout_p=0.0):
    out, w = ref_sdpa(t64(q), t64(k), t64(v))
    if mask is not None:
        w = w.masked_fill(~torch.as_tensor(mask), 0.0)
    return w @ t64(v), w


def sdpa_unscaled(q, k, v, mask, dropout_p=0.0):
    return ref_sdpa(t64(q) * math.sqrt(q.shape[-1]), t64(k), t64(v), None if mask is None else torch.as_tensor(mask))


def sdpa_fill(fill, invert=False):
    """Attention whose blocked logits get ``fill`` (``invert``: the allowed ones do)."""
    def model(q, k, v, mask, dropout_p=0.0):
        if mask is None:
            raise ValueError("no mask on this trial")
        s = ref_scores(q, k)
        m = torch.as_tensor(mask)
        w = ref_softmax(s.masked_fill(m if invert else ~m, fill), -1)
        return w @ t64(v), w
    return model


class DropoutCheck(FunctionCheck):
    """A FunctionCheck whose trials with ``dropout_p > 0`` are judged by what dropout must do, since
    the dropped positions are random.  The exercise does not ask for dropout (its instructions and
    visible checks never use ``dropout_p``), so an output without dropout is accepted; dropout that
    is written must be the documented one: with ``v`` the identity, each output entry is either 0
    (dropped) or the reference weight / (1 - p) (kept), the dropped share lies within 0.25 of p (at
    least 80 weights: a correct dropout misses that band with probability below 1e-6), and the
    returned weights are the softmax before dropout.  Other trials compare with the reference."""

    def judge(self, value, raw, student):
        p = raw.get("dropout_p") or 0.0
        if not p:
            return super().judge(value, raw, student)
        _, w_ref = self.reference(**raw)
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            return Verdict(False, f"{self.target}: return a pair (out, weights)")
        msg = compare_values(value[1], w_ref, f"{self.target}[1] (the weights) with dropout_p={p:.2f}",
                             self.rtol, self.atol)
        try:
            o, w = np.asarray(value[0], dtype=np.float64), w_ref.numpy()
        except (TypeError, ValueError):
            return Verdict(False, f"{self.target}[0]: the output with dropout_p={p:.2f} is not an array")
        if o.shape != w.shape:
            return Verdict(False, f"{self.target}[0]: with dropout_p={p:.2f} the output has shape {o.shape}, "
                                  f"expected {w.shape}")
        dropped = np.isclose(o, 0.0, atol=self.atol)
        if msg is not None:
            if np.allclose(np.asarray(value[1], dtype=np.float64), o, rtol=self.rtol, atol=self.atol) \
                    and not np.allclose(o, w, rtol=self.rtol, atol=self.atol):
                return mistake_verdict(self.target, ("weights_after_dropout",))
            return Verdict(False, msg)
        if np.allclose(o, w, rtol=self.rtol, atol=self.atol):  # no dropout written: not asked for here
            return Verdict(True, f"{self.target}: matches the reference on fresh random inputs")
        if (np.isclose(o, w, rtol=self.rtol, atol=self.atol) | dropped).all():
            return mistake_verdict(self.target, ("dropout_not_rescaled",))
        if not (np.isclose(o, w / (1 - p), rtol=self.rtol, atol=self.atol) | dropped).all():
            return Verdict(False, f"{self.target}[0]: with dropout_p={p:.2f} every weight must be either dropped "
                                  "(0) or kept and rescaled by 1 / (1 - dropout_p), applied to the weights before "
                                  "they multiply v")
        big = w > 10 * self.atol + 1e-3
        share = float(dropped[big].mean()) if big.any() else p
        if abs(share - p) > 0.25:
            return Verdict(False, f"{self.target}[0]: with dropout_p={p:.2f} a share of {share:.2f} of the weights "
                                  "was dropped; each weight must be dropped with probability dropout_p")
        return Verdict(True, f"{self.target}: matches the reference on fresh random inputs, dropout included")


CHECKS = [
    ByHandCheck("test_scores_by_hand", variable="scores", skill="sdpa_scores"),
    ByHandCheck("test_weights_by_hand", variable="weights", skill="sdpa_softmax_row"),
    ByHandCheck("test_output_by_hand", variable="output", skill="sdpa_output"),
    FunctionCheck(
        "test_attention_scores", target="attention_scores", inputs=qk_inputs, trials=3,
        call="attention_scores(_I['q'], _I['k'])", reference=ref_scores,
        mistakes={"no_scale": lambda q, k: ref_scores(q, k, lambda d: 1.0),
                  "scale_by_dk": lambda q, k: ref_scores(q, k, lambda d: d),
                  "scale_by_wrong_axis": (lambda q, k: ref_scores(q, k, lambda d: math.sqrt(q.shape[-2])),
                                          lambda q, k: ref_scores(q, k, lambda d: math.sqrt(k.shape[-2])))},
        forbid_attrs=("scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention"),
        forbid_ops=("scaled_dot_product",)),
    FunctionCheck(
        "test_softmax", target="softmax", inputs=softmax_inputs,
        call="softmax(_I['x'], dim=_I['dim'])", reference=ref_softmax, trials=4, atol=1e-4,
        mistakes={"softmax_ignores_dim": lambda x, dim: ref_softmax(x, -1),
                  "softmax_wrong_axis": softmax_over(0),  # a softmax written for a fixed first axis
                  "softmax_max_shift_global": softmax_global_shift,
                  "softmax_no_max_shift": (softmax_no_shift(torch.float32), softmax_no_shift(torch.float64)),
                  "softmax_inf_not_zero": lambda x, dim: ref_softmax(np.where(np.isinf(x), 0.0, x), dim),
                  "scores_clamped": tuple((lambda x, dim, c=c: ref_softmax(np.minimum(x, c), dim))
                                          for c in (30.0, 50.0, 80.0, 85.0, 88.0))},
        forbid_attrs=("softmax", "log_softmax", "softmin"), forbid_ops=("softmax",)),
    DropoutCheck(
        "test_sdpa", target="scaled_dot_product_attention", inputs=sdpa_inputs,
        call="scaled_dot_product_attention(_I['q'], _I['k'], _I['v'], mask=_I['mask'], dropout_p=_I['dropout_p'])",
        reference=sdpa_ref, trials=4, atol=1e-4,
        mistakes={"mask_after_softmax": sdpa_mask_after, "no_scale": sdpa_unscaled,
                  "softmax_wrong_axis": tuple(sdpa_softmax_over(a) for a in (-2, 0, 1)),
                  "mask_fill_zero": sdpa_fill(0.0),
                  "scale_by_wrong_axis": lambda q, k, v, mask, dropout_p=0.0: ref_sdpa(
                      t64(q) * math.sqrt(q.shape[-1] / v.shape[-1]), t64(k), t64(v),
                      None if mask is None else torch.as_tensor(mask)),
                  "inverted_mask": (sdpa_fill(float("-inf"), invert=True), sdpa_fill(-1e9, invert=True))},
        forbid_attrs=("scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention"),
        forbid_ops=("scaled_dot_product",)),
]
