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
from attnlab_grader.judging.spec import ByHandCheck, FunctionCheck

A = "01_routing_and_soft_lookup"


def t64(x):
    return torch.as_tensor(x, dtype=torch.float64)


# ------------------------------------------------------------------ path lengths
def _dilated(n, k):
    """Smallest m with k**m >= n, in integers."""
    m, reach = 0, 1
    while reach < n:
        reach, m = reach * k, m + 1
    return m


#: Float-logarithm ways of counting the dilated layers that students write (each is exact in real
#: arithmetic): ceil of a log ratio in any base, or floor(log_k(n - 1)) + 1.
_FLOAT_LOGS = (
    lambda n, k: math.ceil(math.log(n) / math.log(k)),
    lambda n, k: math.ceil(math.log(n, k)),
    lambda n, k: math.ceil(math.log2(n) / math.log2(k)),
    lambda n, k: math.ceil(math.log10(n) / math.log10(k)),
    lambda n, k: int(math.log(n - 1, k)) + 1,
    lambda n, k: int(math.log(n - 1) / math.log(k)) + 1,
    lambda n, k: int(math.log2(n - 1) / math.log2(k)) + 1,
    lambda n, k: int(math.log10(n - 1) / math.log10(k)) + 1,
)

#: Exact powers of k and their neighbours k**m +- 1 (up to 10**6): where a float logarithm lands a
#: hair off an integer (``math.log(125, 5) = 3.0000000000000004``, ``math.log(1000, 10) =
#: 2.9999999999999996``) and where a reach compared with n - 1 instead of n is one layer short.
_BOUNDARIES = [(k ** m + d, k) for k in range(2, 11) for m in range(1, 21) if k ** m <= 2 * 10 ** 4
               for d in (-1, 0, 1) if k ** m + d >= 2]
_FLOAT_LOG_TRAPS = sorted({(k ** m + d, k) for k in range(2, 11) for m in range(1, 21) if k ** m <= 10 ** 6
                           for d in (-1, 0, 1) if k ** m + d >= 3
                           and any(f(k ** m + d, k) != _dilated(k ** m + d, k) for f in _FLOAT_LOGS)})
PATH_TRIALS = 3


def path_inputs(rng, trial):
    """Five random pairs plus a third of the boundary and float-log trap pairs (each pair is in
    exactly one trial, so every trap is tried on every grading; a third keeps a loop that counts
    layer by layer fast)."""
    cases = [[int(rng.integers(2, 300)), int(rng.integers(2, 8))] for _ in range(5)]
    cases += [[n, k] for n, k in _BOUNDARIES[trial::PATH_TRIALS] + _FLOAT_LOG_TRAPS[trial::PATH_TRIALS]]
    return {"cases": cases}


def _exact(n, k):
    return [n - 1, -(-(n - 1) // (k - 1)), _dilated(n, k), 1]  # plain reach 1 + m (k - 1) >= n


def ref_paths(cases, variant=None):
    out = []
    for n, k in cases:
        row = _exact(n, k)
        if variant == "rnn_tokens":
            row[0] = n
        elif variant == "cnn_floor":
            row[1] = (n - 1) // (k - 1)
        elif isinstance(variant, int):  # the float logarithm number `variant`
            row[2] = _FLOAT_LOGS[variant](n, k) if n > 2 else row[2]
        elif variant == "reach_n_minus_1":
            row[2] = _dilated(n - 1, k)
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
    """Trial 0: no batch axis (L, d); other trials: (B, L, d).  Trial 2: query row 0 of every
    batch meets one large score (q · k / temperature between 750 and 900), so exp() overflows in
    float32 and in float64 unless the maximum is subtracted first, and key 1 a score 1 to 3 lower (clamping the
    scores makes the two equal); the other rows' scores stay more than 104 below it, so subtracting
    the maximum of the whole tensor instead of each row's underflows those rows to 0 / 0.  Key 2 (trial 2
    has at least 3 keys) scores 20 to 60 below zero for row 0: subtracting the row's minimum instead of
    its maximum leaves a difference above 770, which overflows too."""
    B, L, S = int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(2, 6))
    d_k, d_v = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    if trial == 2:
        L, S = max(L, 2), max(S, 3)
    lead = (B,) if trial != 0 else ()
    q, k = rng.standard_normal(lead + (L, d_k)) * 1.5, rng.standard_normal(lead + (S, d_k))
    temperature = float(rng.choice([0.5, 2.0, 3.0]))
    if trial == 2:
        q[..., 0, :] += np.sign(q[..., 0, :]) * 0.5  # query row 0 is not near zero
        temperature = 0.5  # raw scores near 400 keep float32 rounding far below the tolerance
        target = rng.uniform(750.0, 900.0) * temperature  # the score of key 0 for query row 0
        k[..., 0, :] = q[..., 0, :] * target / (q[..., 0, :] ** 2).sum(-1, keepdims=True)
        # key 1 scores a little less (1 to 3 after the temperature): clamping the scores makes them equal
        gap = rng.uniform(1.0, 3.0) * temperature
        k[..., 1, :] = q[..., 0, :] * (target - gap) / (q[..., 0, :] ** 2).sum(-1, keepdims=True)
        low = -rng.uniform(20.0, 60.0) * temperature  # key 2 far below: a shift by the row's minimum overflows
        k[..., 2, :] = q[..., 0, :] * low / (q[..., 0, :] ** 2).sum(-1, keepdims=True)
        # the other rows are small multiples of row 0: their score for key 0 is at most 0.2 * target
        q[..., 1:, :] = rng.uniform(-0.2, 0.2, size=lead + (L - 1, 1)) * q[..., :1, :]
    return {"q": q, "k": k, "v": rng.standard_normal(lead + (S, d_v)), "temperature": temperature}


def ref_soft(q, k, v, temperature, divisor=None):
    """attnlab's attention with the query rescaled so that its 1/√d_k becomes 1/temperature."""
    d_k = q.shape[-1]
    t = temperature if divisor is None else divisor(d_k, temperature)
    return ref_sdpa(t64(q) * math.sqrt(d_k) / t, t64(k), t64(v))


def soft_no_max_shift(dtype):
    """exp() of the raw scores in ``dtype`` (float32 as the student's tensors are, or float64):
    inf / inf = NaN rows, in float64 only where a score passes about 709."""
    def model(q, k, v, temperature):
        s = torch.as_tensor(q, dtype=dtype) @ torch.as_tensor(k, dtype=dtype).transpose(-2, -1)
        e = (s / temperature).exp()
        w = e / e.sum(-1, keepdim=True)
        return (w @ torch.as_tensor(v, dtype=dtype)).to(torch.float64), w.to(torch.float64)
    return model


def soft_global_max_shift(q, k, v, temperature):
    """The maximum of the whole score tensor subtracted (float32, as the student's tensors are)."""
    s = torch.as_tensor(q, dtype=torch.float32) @ torch.as_tensor(k, dtype=torch.float32).transpose(-2, -1)
    s = s / temperature
    e = (s - s.max()).exp()
    w = e / e.sum(-1, keepdim=True)
    return (w @ torch.as_tensor(v, dtype=torch.float32)).to(torch.float64), w.to(torch.float64)


def soft_clamped(limit):
    """Scores clamped at ``limit`` instead of shifted by the row maximum (against overflow)."""
    def model(q, k, v, temperature):
        w = (t64(q) @ t64(k).transpose(-2, -1) / temperature).clamp(max=limit).softmax(dim=-1)
        return w @ t64(v), w
    return model


def soft_wrong_axis(q, k, v, temperature):
    w = (t64(q) @ t64(k).transpose(-2, -1) / temperature).softmax(dim=-2)
    return w @ t64(v), w


LOOKUP_SETUP = """
def _lookup_call(f, I):
    out, w = f(I['q'], I['k'], I['v'], temperature=I['temperature'])
    raised = []
    for bad in (0.0, -I['temperature']):  # the docstring's Raises: temperature <= 0, both branches
        try:
            f(I['q'], I['k'], I['v'], temperature=bad)
            raised.append(False)
        except ValueError:
            raised.append(True)
        except Exception:  # noqa: BLE001 - another error is not the documented ValueError
            raised.append(False)
    return out, w, all(raised)
"""


def ref_lookup(q, k, v, temperature, raises=True):
    """The lookup's output and weights, and whether ``temperature`` 0 and ``-temperature`` both raised."""
    return (*ref_soft(q, k, v, temperature), raises)


def lookup_mistake(model):
    """A mistake model of the lookup's values, with the temperature check kept or left out (two models:
    the values name the mistake whether or not the answer also raises)."""
    models = model if isinstance(model, tuple) else (model,)
    return tuple(lambda q, k, v, temperature, m=m, flag=flag: (*m(q, k, v, temperature), flag)
                 for m in models for flag in (True, False))


def ref_hard(q, k, v, pick=torch.argmax):
    scores = t64(q) @ t64(k).transpose(-2, -1)  # (..., L, S)
    one_hot = torch.nn.functional.one_hot(pick(scores, dim=-1), scores.shape[-1]).to(torch.float64)
    return one_hot @ t64(v)


def hard_inputs(rng, trial):
    """Trial 0 without a batch axis, trials 1-2 with one; ordinary scores (an argmax does not
    overflow, and keys of length ~1000 would blur which key is nearest in float32)."""
    return {k: v for k, v in lookup_inputs(rng, min(trial, 1)).items() if k != "temperature"}


def hard_nearest(q, k, v):
    """The value of the key nearest to the query (smallest distance), not the best score."""
    d = ((t64(q)[..., :, None, :] - t64(k)[..., None, :, :]) ** 2).sum(-1)  # (..., L, S)
    one_hot = torch.nn.functional.one_hot(d.argmin(dim=-1), d.shape[-1]).to(torch.float64)
    return one_hot @ t64(v)


CHECKS = [
    ByHandCheck("test_weights_by_hand", variable="weights", skill="soft_lookup_weights"),
    ByHandCheck("test_output_by_hand", variable="output", skill="soft_lookup_output"),
    ByHandCheck("test_paths_by_hand", variable="paths", skill="path_lengths"),
    FunctionCheck(
        "test_path_lengths", target="path_lengths", inputs=path_inputs,
        call="[path_lengths(n, k) for n, k in _I['cases']]", reference=ref_paths, trials=PATH_TRIALS,
        atol=0.0, rtol=0.0,
        mistakes={"path_counts_tokens":
                  lambda cases: ref_paths(cases, "rnn_tokens"),
                  "cnn_floor_division": lambda cases: ref_paths(cases, "cnn_floor"),
                  "dilated_float_log": tuple((lambda cases, i=i: ref_paths(cases, i)) for i in range(len(_FLOAT_LOGS))),
                  "dilated_reach_off_by_one": lambda cases: ref_paths(cases, "reach_n_minus_1")}),
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
        call="_lookup_call(soft_lookup, _I)", setup=LOOKUP_SETUP,
        reference=ref_lookup, trials=3, atol=1e-4,
        mistakes={"temperature_not_checked": lambda q, k, v, temperature: ref_lookup(q, k, v, temperature, False),
                  **{name: lookup_mistake(model) for name, model in {
                      "temperature_ignored": lambda q, k, v, temperature: ref_soft(q, k, v, 1.0),
                      "temperature_multiplies": lambda q, k, v, temperature: ref_soft(q, k, v, 1 / temperature),
                      "scaled_lookup": lambda q, k, v, temperature: ref_soft(
                          q, k, v, temperature, lambda d, t: t * math.sqrt(d)),
                      "softmax_wrong_axis": soft_wrong_axis,
                      "softmax_no_max_shift": (soft_no_max_shift(torch.float32), soft_no_max_shift(torch.float64)),
                      "softmax_max_shift_global": soft_global_max_shift,
                      "scores_clamped": tuple(soft_clamped(c) for c in (30.0, 50.0, 80.0, 85.0, 88.0))}.items()}},
        forbid_attrs=("scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention"),
        forbid_ops=("scaled_dot_product",)),
    FunctionCheck(
        "test_hard_lookup", target="hard_lookup", inputs=hard_inputs,
        call="hard_lookup(_I['q'], _I['k'], _I['v'])", reference=ref_hard, trials=3, atol=1e-5,
        mistakes={"hard_lookup_argmin":
                  lambda q, k, v: ref_hard(q, k, v, torch.argmin),
                  "hard_lookup_is_soft":
                  lambda q, k, v: ref_soft(q, k, v, 1.0)[0],
                  "hard_lookup_nearest_key": hard_nearest}),
]
