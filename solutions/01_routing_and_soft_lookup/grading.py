"""Grading spec for exercise 01 (see autograder/AUTHORING.md). Never released to students.

Inputs are drawn at grading time from a generator the grader seeds with os.urandom;
references come from attnlab.nn (or exact integer counts) and run in the grader,
outside the student's sandbox.
"""
import math

import numpy as np
import torch

from attnlab.nn import apply_temperature as ref_apply_temperature
from attnlab.nn import scaled_dot_product_attention as ref_sdpa
from attnlab_grader.spec import ByHandCheck, FunctionCheck

A = "01_routing_and_soft_lookup"


def t64(x):
    return torch.as_tensor(x, dtype=torch.float64)


# ------------------------------------------------------------------ path lengths
# (n, k) pairs where ceil(log(n) / log(k)) overshoots an exact power: they catch a float log.
_FLOAT_LOG_TRAPS = [(k ** m, k) for k in range(2, 11) for m in range(2, 8)
                    if k ** m <= 10 ** 6 and math.ceil(math.log(k ** m) / math.log(k)) != m
                    and math.ceil(math.log(k ** m, k)) != m]


def path_inputs(rng):
    cases = [[int(rng.integers(2, 300)), int(rng.integers(2, 8))] for _ in range(5)]
    k = int(rng.integers(2, 8))
    cases.append([k ** int(rng.integers(1, 5)), k])  # an exact power of k
    n, k = _FLOAT_LOG_TRAPS[int(rng.integers(len(_FLOAT_LOG_TRAPS)))]
    cases.append([n, k])
    return {"cases": cases}


def _exact(n, k):
    cnn = 0
    while 1 + cnn * (k - 1) < n:  # reach of m plain layers
        cnn += 1
    dil = 0
    while k ** dil < n:  # reach of m dilated layers
        dil += 1
    return [n - 1, cnn, dil, 1]


def ref_paths(cases, variant=None):
    out = []
    for n, k in cases:
        row = _exact(n, k)
        if variant == "rnn_tokens":
            row[0] = n
        elif variant == "cnn_floor":
            row[1] = (n - 1) // (k - 1)
        elif variant == "float_log":
            row[2] = math.ceil(math.log(n) / math.log(k))
        out.append(row)
    return np.array(out, dtype=np.float64)


# ------------------------------------------------------------------ temperature and lookups
def temperature_inputs(rng):
    shape = tuple(int(n) for n in rng.integers(1, 6, size=int(rng.integers(1, 4))))
    return {"logits": rng.standard_normal(shape) * 3, "temperature": float(rng.uniform(0.2, 4.0))}


TEMPERATURE_SETUP = """
def _temperature_call(f, I):
    out = f(I['logits'], I['temperature'])
    raised = []
    for bad in (0.0, -I['temperature']):
        try:
            f(I['logits'], bad)
            raised.append(False)
        except ValueError:
            raised.append(True)
    return out, all(raised)
"""


def ref_temperature(logits, temperature, raises=True, multiply=False):
    out = t64(logits) * temperature if multiply else ref_apply_temperature(t64(logits), temperature)
    return out, raises


def lookup_inputs(rng, trial):
    """Trial 0: no batch axis (L, d); other trials: (B, L, d).  Trial 2: one score per query
    row is large (q · k / temperature between 100 and 300), so exp() overflows in float32
    unless the maximum is subtracted first."""
    B, L, S = int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(2, 6))
    d_k, d_v = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    lead = (B,) if trial != 0 else ()
    q, k = rng.standard_normal(lead + (L, d_k)) * 1.5, rng.standard_normal(lead + (S, d_k))
    temperature = float(rng.choice([0.5, 2.0, 3.0]))
    if trial == 2:
        q = q + np.sign(q) * 0.5  # no query row near zero
        target = rng.uniform(100.0, 300.0) * temperature  # the score of key 0 for every query row
        k[..., 0, :] = q[..., 0, :] * target / (q[..., 0, :] ** 2).sum(-1, keepdims=True)
        q[..., 1:, :] = q[..., :1, :]  # every row meets the same large score
    return {"q": q, "k": k, "v": rng.standard_normal(lead + (S, d_v)), "temperature": temperature}


def ref_soft(q, k, v, temperature, divisor=None):
    """attnlab's attention with the query rescaled so that its 1/√d_k becomes 1/temperature."""
    d_k = q.shape[-1]
    t = temperature if divisor is None else divisor(d_k, temperature)
    return ref_sdpa(t64(q) * math.sqrt(d_k) / t, t64(k), t64(v))


def soft_no_max_shift(q, k, v, temperature):
    """exp() of the raw scores in float32 (as the student's tensors are): inf / inf = NaN rows."""
    s = torch.as_tensor(q, dtype=torch.float32) @ torch.as_tensor(k, dtype=torch.float32).transpose(-2, -1)
    e = (s / temperature).exp()
    w = e / e.sum(-1, keepdim=True)
    return (w @ torch.as_tensor(v, dtype=torch.float32)).to(torch.float64), w.to(torch.float64)


def soft_wrong_axis(q, k, v, temperature):
    w = (t64(q) @ t64(k).transpose(-2, -1) / temperature).softmax(dim=-2)
    return w @ t64(v), w


def ref_hard(q, k, v, pick=torch.argmax):
    scores = t64(q) @ t64(k).transpose(-2, -1)  # (..., L, S)
    one_hot = torch.nn.functional.one_hot(pick(scores, dim=-1), scores.shape[-1]).to(torch.float64)
    return one_hot @ t64(v)


CHECKS = [
    ByHandCheck("test_weights_by_hand", variable="weights", skill="soft_lookup_weights"),
    ByHandCheck("test_output_by_hand", variable="output", skill="soft_lookup_output"),
    ByHandCheck("test_paths_by_hand", variable="paths", skill="path_lengths"),
    FunctionCheck(
        "test_path_lengths", target="path_lengths", inputs=path_inputs,
        call="[path_lengths(n, k) for n, k in _I['cases']]", reference=ref_paths, trials=2, atol=0.0, rtol=0.0,
        mistakes={"path_counts_tokens":
                  lambda cases: ref_paths(cases, "rnn_tokens"),
                  "cnn_floor_division": lambda cases: ref_paths(cases, "cnn_floor"),
                  "dilated_float_log":
                  lambda cases: ref_paths(cases, "float_log")}),
    FunctionCheck(
        "test_apply_temperature", target="apply_temperature", inputs=temperature_inputs,
        call="_temperature_call(apply_temperature, _I)", setup=TEMPERATURE_SETUP,
        reference=ref_temperature, trials=3,
        mistakes={"temperature_not_checked": lambda logits, temperature: ref_temperature(
                      logits, temperature, raises=False),
                  "temperature_multiplies": lambda logits, temperature: ref_temperature(
                      logits, temperature, multiply=True)}),
    FunctionCheck(
        "test_soft_lookup", target="soft_lookup", inputs=lookup_inputs,
        call="soft_lookup(_I['q'], _I['k'], _I['v'], temperature=_I['temperature'])",
        reference=ref_soft, trials=3, atol=1e-4,
        mistakes={"temperature_ignored": lambda q, k, v, temperature: ref_soft(q, k, v, 1.0),
                  "temperature_multiplies":
                      lambda q, k, v, temperature: ref_soft(q, k, v, 1 / temperature),
                  "scaled_lookup": lambda q, k, v, temperature: ref_soft(
                      q, k, v, temperature, lambda d, t: t * math.sqrt(d)),
                  "softmax_wrong_axis": soft_wrong_axis,
                  "softmax_no_max_shift": soft_no_max_shift},
        forbid_attrs=("scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention"),
        forbid_ops=("scaled_dot_product",)),
    FunctionCheck(
        "test_hard_lookup", target="hard_lookup", inputs=lambda rng, trial: {
            k: v for k, v in lookup_inputs(rng, trial).items() if k != "temperature"},
        call="hard_lookup(_I['q'], _I['k'], _I['v'])", reference=ref_hard, trials=3, atol=1e-5,
        mistakes={"hard_lookup_argmin":
                  lambda q, k, v: ref_hard(q, k, v, torch.argmin),
                  "hard_lookup_is_soft":
                  lambda q, k, v: ref_soft(q, k, v, 1.0)[0]}),
]
