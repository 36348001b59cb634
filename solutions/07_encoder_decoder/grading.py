"""Grading spec for exercise 07 (see autograder/AUTHORING.md). Never released to students.

Inputs and models are drawn at grading time from a generator the grader seeds with
os.urandom; reference masks come from attnlab.nn (causal_mask, padding_mask,
combine_masks) and run in the grader, outside the student's sandbox.
"""
import math

import numpy as np
import torch

from attnlab.nn import causal_mask, combine_masks
from attnlab.nn import padding_mask as ref_padding
from attnlab_grader.judging.spec import ByHandCheck, FunctionCheck

A = "07_encoder_decoder"


# ------------------------------------------------------------------ padding_mask
def pad_inputs(rng, trial):
    """Edge cases: one full sequence and one of length 1; trial 2: every sequence padded (the mask is
    still S wide) and S of 65-90 positions (positions sliced from a fixed 16 or 64 table fail);
    odd trials: lengths as a list."""
    B, S = int(rng.integers(2, 5)), int(rng.integers(2, 9)) if trial != 2 else int(rng.integers(65, 91))
    lengths = rng.integers(1, S + 1, size=B)
    lengths[0], lengths[-1] = S, 1
    if trial == 2:
        lengths = rng.integers(1, S - 1, size=B)
    as_list = trial % 2 == 1
    return {"lengths": [int(n) for n in lengths] if as_list else lengths.astype(np.int64), "S": S}


PAD_SETUP = """
def _pad_call(f, I):
    m = f(I['lengths'], I['S'])
    errors = []
    for bad in ([0, 1], [I['S'] + 1]):
        try:
            f(bad, I['S'])
            errors.append(False)
        except ValueError:
            errors.append(True)
    return m, all(errors)
"""


def ref_pad(lengths, S):
    return ref_padding(torch.as_tensor(np.asarray(lengths), dtype=torch.long), S), True


def _pad_np(lengths, S, shift=0):
    return np.arange(S)[None, :] < (np.asarray(lengths)[:, None] + shift)


def _pad_width_from_lengths(lengths, S):
    return _pad_np(lengths, int(np.max(lengths))), True


# ------------------------------------------------------------------ encoder_decoder_masks
def masks_inputs(rng, trial):
    """S != L (catches swapped paddings), padding on both sides; trial 2: a source and a target longer
    than 16 and 64 positions (a mask or positions sliced from a fixed-size buffer fail), every
    sequence padded (widths come from S and L, not from the lengths); odd trials: lists."""
    B = int(rng.integers(1, 4))
    S = int(rng.integers(3, 8)) if trial != 2 else int(rng.integers(65, 90))
    L = int(rng.choice([n for n in range(3, 8) if n != S])) if trial != 2 else S + int(rng.choice([-1, 1]))
    src = rng.integers(1, S + 1, size=B) if trial != 2 else rng.integers(1, S - 1, size=B)
    tgt = rng.integers(1, L + 1, size=B) if trial != 2 else rng.integers(1, L - 1, size=B)
    src[0], tgt[-1] = max(2, S - 2), L - 1  # some padding on both sides (S, L >= 3)
    as_list = trial % 2 == 1
    conv = (lambda a: [int(n) for n in a]) if as_list else (lambda a: a.astype(np.int64))
    return {"src_lengths": conv(src), "tgt_lengths": conv(tgt), "S": S, "L": L}


def ref_masks(src_lengths, tgt_lengths, S, L, mistake=None):
    src = ref_padding(torch.as_tensor(np.asarray(src_lengths)), S)  # (B, S)
    tgt = ref_padding(torch.as_tensor(np.asarray(tgt_lengths)), L)  # (B, L)
    B = src.shape[0]
    enc = combine_masks(src[:, None, :]).expand(B, S, S)
    dec = combine_masks(causal_mask(L), tgt[:, None, :])  # (B, L, L)
    cross = combine_masks(src[:, None, :]).expand(B, L, S)
    if mistake == "causal_encoder":
        enc = combine_masks(causal_mask(S), src[:, None, :])
    elif mistake == "causal_cross":
        cross = combine_masks(torch.ones(L, S, dtype=torch.bool).tril(), cross)
    elif mistake == "no_causal_decoder":
        dec = tgt[:, None, :].expand(B, L, L)
    elif mistake == "strict_causal":  # query i sees keys j < i only
        dec = combine_masks(torch.ones(L, L, dtype=torch.bool).tril(-1), tgt[:, None, :])
    elif mistake == "no_pad_decoder":
        dec = causal_mask(L).expand(B, L, L)
    elif mistake == "query_rows":
        enc = src[:, :, None].expand(B, S, S)
        dec = combine_masks(causal_mask(L), tgt[:, :, None])
    elif mistake == "cross_query_rows":  # cross-attention masked by the target's padding, on query rows
        cross = tgt[:, :, None].expand(B, L, S)
    elif mistake == "inverted":
        enc, dec, cross = ~enc, ~dec, ~cross
    return enc, dec, cross


# ------------------------------------------------------------------ depends_on_future
_KINDS = ["causal", "open", "peek_next", "peek_last", "ffn", "causal_stack", "leaky_second_layer", "shift_back",
          "open_pre_ln", "peek_at_t"]


def future_inputs(rng, trial):
    """The contract's ``t`` in ``1 .. L - 1`` at both ends and inside: trial 0 ``t = 1``, trial 1
    ``t = L - 1`` (only the last input perturbed), trial 2 ``t`` drawn in ``2 .. L - 2``."""
    d, L, B = int(rng.choice([4, 6, 8])), int(rng.integers(4, 8)), int(rng.integers(1, 3))
    g = lambda *s: rng.standard_normal(s) / math.sqrt(s[0])  # noqa: E731
    t = {0: 1, 1: L - 1}.get(trial, int(rng.integers(2, L - 1)))
    return {"x": rng.standard_normal((B, L, d)), "t": t,
            "wq": g(d, d), "wk": g(d, d), "wv": g(d, d), "w1": g(d, 2 * d), "w2": g(2 * d, d)}


# Sandbox side: fresh models built with plain torch from the grader's weights.
FUTURE_SETUP = """
class _Attn(nn.Module):
    def __init__(self, I, allow, pre_ln=False):
        super().__init__()
        self.I, self.allow, self.pre_ln = I, allow, pre_ln  # allow(L) -> (L, L) bool, True = may attend
    def forward(self, x):
        I = self.I
        t = F.layer_norm(x, x.shape[-1:]) if self.pre_ln else x
        s = (t @ I['wq']) @ (t @ I['wk']).transpose(-2, -1) / math.sqrt(t.shape[-1])
        s = s.masked_fill(~self.allow(t.shape[1]), float('-inf'))
        return x + torch.softmax(s, dim=-1) @ (t @ I['wv'])

class _FFN(nn.Module):
    def __init__(self, I):
        super().__init__()
        self.I = I
    def forward(self, t):
        return t + torch.relu(t @ self.I['w1']) @ self.I['w2']

class _ShiftBack(nn.Module):
    def forward(self, t):  # output i = input i - 1 (position 0 gets zeros): causal
        return torch.cat([torch.zeros_like(t[:, :1]), t[:, :-1]], dim=1)

def _tril(L, k=0):
    return torch.ones(L, L, dtype=torch.bool).tril(k)

def _last(L):
    m = _tril(L)
    m[:, -1] = True
    return m

def _at_t(t):
    def allow(L):  # causal, and query t - 1 also sees key t: a leak at the one boundary the probe names
        m = _tril(L)
        m[t - 1, t] = True
        return m
    return allow

def _models(I):
    full = lambda L: torch.ones(L, L, dtype=torch.bool)
    return [_Attn(I, _tril), _Attn(I, full), _Attn(I, lambda L: _tril(L, 1)), _Attn(I, _last), _FFN(I),
            nn.Sequential(_Attn(I, _tril), _FFN(I), _Attn(I, _tril)),
            nn.Sequential(_Attn(I, _tril), _Attn(I, full), _Attn(I, _tril)), _ShiftBack(),
            _Attn(I, full, pre_ln=True), _Attn(I, _at_t(int(I['t'])))]

def _future_call(f, I):
    answers, untouched = [], True
    for m in _models(I):
        x = I['x'].clone()
        answers.append(bool(f(m, x, int(I['t']))))
        untouched = untouched and torch.equal(x, I['x'])  # the caller's x must come back unchanged
    return answers, untouched
"""


def _allow(kind, L, t):
    """The model's attention pattern(s), built with attnlab's causal_mask."""
    causal = causal_mask(L)
    if kind in ("causal", "causal_stack", "ffn", "shift_back"):
        return causal  # a position-wise FFN and a backward shift see no later position either
    if kind in ("open", "open_pre_ln"):
        return torch.ones(L, L, dtype=torch.bool)
    if kind == "peek_next":
        return causal_mask(L, L + 1)[:, :L]  # j <= i + 1 (the KV-cache alignment, last key dropped)
    if kind == "peek_last":
        m = causal.clone()
        m[:, -1] = True
        return m
    if kind == "leaky_second_layer":
        return torch.ones(L, L, dtype=torch.bool)  # one unmasked layer in the stack
    if kind == "peek_at_t":  # query t - 1 also sees key t, nothing else leaks
        m = causal.clone()
        m[t - 1, t] = True
        return m
    raise KeyError(kind)


def ref_future(x, t, wq, wk, wv, w1, w2, mistake=None):
    """``(answers, True)``: each model's answer, and True for the caller's x left unchanged."""
    L = x.shape[1]
    out = []
    for kind in _KINDS:
        allow = _allow(kind, L, t)
        if mistake == "only_t":
            out.append(bool(allow[:t, t].any()))
        elif mistake == "includes_t":
            out.append(kind != "shift_back")  # output t reads input t in every model but the backward shift
        elif mistake == "shifted":  # perturbs t + 1 .. L - 1, compares 0 .. t: the question for t + 1
            out.append(bool(allow[:t + 1, t + 1:].any()))
        else:
            out.append(bool(allow[:t, t:].any()))  # a query before t may attend a key at >= t
    return np.array(out), mistake != "in_place"


def _constant(value):
    return lambda **r: (np.full(len(_KINDS), value, dtype=bool), True)


CHECKS = [
    ByHandCheck("test_mask_by_hand", variable="mask", skill="choose_mask"),
    ByHandCheck("test_cross_shape_by_hand", variable="shape", skill="cross_attention_shapes"),
    FunctionCheck(
        "test_padding_mask", target="padding_mask", inputs=pad_inputs, setup=PAD_SETUP,
        call="_pad_call(padding_mask, _I)", reference=ref_pad, trials=4, atol=0.0, rtol=0.0,
        mistakes={"inverted_mask":
                      lambda lengths, S: (~_pad_np(lengths, S), True),
                  "length_off_by_one":
                      lambda lengths, S: (_pad_np(lengths, S, 1), True),
                  "lengths_not_checked":
                      lambda lengths, S: (_pad_np(lengths, S), False),
                  "padding_width_from_lengths": _pad_width_from_lengths}),
    FunctionCheck(
        "test_encoder_decoder_masks", target="encoder_decoder_masks", inputs=masks_inputs,
        call="encoder_decoder_masks(_I['src_lengths'], _I['tgt_lengths'], _I['S'], _I['L'])",
        reference=ref_masks, trials=4, atol=0.0, rtol=0.0,
        mistakes={"encoder_causal":
                      lambda **r: ref_masks(**r, mistake="causal_encoder"),
                  "needless_causal_mask":
                      lambda **r: ref_masks(**r, mistake="causal_cross"),
                  "missing_causal_mask": lambda **r: ref_masks(**r, mistake="no_causal_decoder"),
                  "causal_excludes_diagonal": lambda **r: ref_masks(**r, mistake="strict_causal"),
                  "missing_padding_mask":
                      lambda **r: ref_masks(**r, mistake="no_pad_decoder"),
                  "mask_padded_queries": (lambda **r: ref_masks(**r, mistake="query_rows"),
                                          lambda **r: ref_masks(**r, mistake="cross_query_rows")),
                  "inverted_mask": lambda **r: ref_masks(**r, mistake="inverted")}),
    FunctionCheck(
        "test_depends_on_future", target="depends_on_future", inputs=future_inputs, setup=FUTURE_SETUP,
        call="_future_call(depends_on_future, _I)", reference=ref_future, trials=3, atol=0.0, rtol=0.0,
        mistakes={"leak_probe_one_position":
                      lambda **r: ref_future(**r, mistake="only_t"),
                  "leak_probe_compares_t":
                      lambda **r: ref_future(**r, mistake="includes_t"),
                  "leak_probe_alias": (_constant(False),  # the copy never differs; an alias also changes x
                                       lambda **r: (np.zeros(len(_KINDS), dtype=bool), False)),
                  "leak_probe_always_leaky": _constant(True),
                  "leak_probe_constant_shift":
                      lambda **r: (ref_future(**r)[0] & (np.arange(len(_KINDS)) != _KINDS.index("open_pre_ln")), True),
                  "leak_probe_shifted_by_one": lambda **r: ref_future(**r, mistake="shifted"),
                  "input_modified_in_place": lambda **r: ref_future(**r, mistake="in_place")}),
]
