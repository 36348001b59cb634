"""Grading spec for exercise 03 (see autograder/AUTHORING.md). Never released to students."""
import numpy as np
import torch

from attnlab.nn import causal_mask as ref_causal
from attnlab.nn import combine_masks as ref_combine
from attnlab.nn import padding_mask as ref_padding
from attnlab_grader.judging.spec import ByHandCheck, FunctionCheck

A = "03_masks"


def causal_inputs(rng, trial):
    """Trial 0: square, default S; 1: S >= L + 2 (KV-cache alignment); 2: 16 < L <= 64 and 3: L > 64,
    so a mask sliced from a fixed-size buffer (16x16, 64x64) fails."""
    L = int(rng.integers(1, 8))
    if trial == 0:
        return {"L": int(rng.integers(2, 8)), "S": None}  # square, default S
    if trial == 1:  # KV-cache alignment; S - L >= 2 tells it apart from excluding the diagonal (same at S - L = 1)
        return {"L": L, "S": L + int(rng.integers(2, 5))}
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


def future_inputs(rng, trial):
    """The contract's ``0 <= t < L - 1`` at both ends and inside: trial 0 ``t = 0``, trial 1 ``t = L - 2``
    (one future position), trial 2 ``t`` drawn in ``1 .. L - 3``."""
    L = int(rng.integers(5, 9))
    t = {0: 0, 1: L - 2}.get(trial, int(rng.integers(1, L - 2)))
    return {"L": L, "t": t}


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

def _first_sees_all(L):
    m = torch.ones(L, L, dtype=torch.bool).tril()
    m[0] = True
    return m

def _everyone_sees_last(L):
    m = torch.ones(L, L, dtype=torch.bool).tril()
    m[:, -1] = True
    return m

_first_peeks = _toy(_first_sees_all)      # only position 0 leaks (compared only at t: unseen)
_last_peeked = _toy(_everyone_sees_last)  # every position reads the last one (perturbing only t + 1: unseen)
"""

#: The toy attentions in order: causal, full, peeks one step, position 0 sees all, all see the last one.
FUTURE_TOYS = ("_causal_attn", "_full_attn", "_peek_one", "_first_peeks", "_last_peeked")


def future_probe(L, t, perturbed, compared):
    """What a leak probe answers for each of FUTURE_TOYS when it perturbs the positions
    ``perturbed`` and compares the outputs at ``compared`` (sets of positions)."""
    def sees(i):  # the positions output i reads, per toy
        return [set(range(i + 1)), set(range(L)), set(range(min(i + 2, L))),
                set(range(L)) if i == 0 else set(range(i + 1)), set(range(i + 1)) | {L - 1}]
    return [any(sees(i)[n] & set(perturbed) for i in compared) for n in range(len(FUTURE_TOYS))]

CHECKS = [
    ByHandCheck("test_causal_by_hand", variable="causal", skill="causal_mask_build"),
    ByHandCheck("test_padding_by_hand", variable="padding", skill="padding_mask_build"),
    FunctionCheck(
        "test_causal_mask", target="causal_mask", inputs=causal_inputs, trials=4,
        call="causal_mask(_I['L'], _I['S'])",
        reference=lambda L, S: ref_causal(L, S),
        mistakes={"causal_excludes_diagonal":
                  lambda L, S: torch.ones(L, S or L, dtype=torch.bool).tril((S or L) - L - 1),
                  "inverted_mask": lambda L, S: ~ref_causal(L, S),
                  "causal_kv_misaligned": (lambda L, S: torch.ones(L, S or L, dtype=torch.bool).tril(),
                                           lambda L, S: torch.ones(L, S or L, dtype=torch.bool).tril(L - (S or L)))},
        forbid_attrs=("causal_mask",)),
    FunctionCheck(
        "test_padding_mask", target="padding_mask", inputs=padding_inputs, trials=3,
        call="padding_mask(_I['lengths'], _I['S'])",
        reference=lambda lengths, S: ref_padding(_lengths(lengths), S),
        mistakes={"inverted_mask": lambda lengths, S: ~ref_padding(_lengths(lengths), S)},
        forbid_attrs=("padding_mask",)),
    FunctionCheck(
        "test_combine_masks", target="combine_masks", inputs=combine_inputs, trials=3,
        call="(combine_masks(_I['a'], None, _I['b'], _I['c']), combine_masks(None, None), combine_masks(_I['a']))",
        reference=lambda a, b, c: (ref_combine(torch.as_tensor(a), torch.as_tensor(b), torch.as_tensor(c)), None,
                                   torch.as_tensor(a)),
        mistakes={"combine_with_or": lambda a, b, c: (torch.as_tensor(a) | torch.as_tensor(b) | torch.as_tensor(c), None, torch.as_tensor(a))},
        forbid_attrs=("combine_masks",)),
    FunctionCheck(
        "test_sees_future", target="sees_future", inputs=future_inputs, trials=3, setup=FUTURE_SETUP,
        call="[sees_future(a, L=_I['L'], t=_I['t']) for a in (%s)]" % ", ".join(FUTURE_TOYS),
        reference=lambda L, t: future_probe(L, t, range(t + 1, L), range(t + 1)),
        mistakes={"leak_probe_one_output": lambda L, t: future_probe(L, t, range(t + 1, L), [t]),
                  "leak_probe_one_position": (lambda L, t: future_probe(L, t, [t + 1], range(t + 1)),
                                              lambda L, t: future_probe(L, t, [L - 1], range(t + 1))),
                  "leak_probe_always_leaky": lambda L, t: [True] * len(FUTURE_TOYS)}),
]
