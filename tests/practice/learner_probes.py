"""Learner probes: what real learners type, judged against oracles written apart from the engine.

For every skill an *oracle* recomputes, from the problem's numbers alone and with plain numpy, the right
answer, a learner's hand working (each written-down value possibly rounded to the asked decimals) and the
answer each common mistake gives. Nothing here calls the engine's own working, solution or mistake
functions: the engine is only asked to ``check`` the answers built from these oracles.

:func:`probe` then puts to every skill, on many problems:

* the right answer in every form the prompt allows (more decimals, fractions, scientific notation, thousands
  separators, other brackets and separators, 0/1 and additive 0/−inf masks written several ways, option
  letters in several styles, the equivalent orders), and the values a learner's rounded working gives;
  a right answer with fewer decimals than asked may only be asked for the precision;
* typos and slips (a digit swapped, a sign lost, an entry off by several units beyond anything rounding the
  working reaches, a flipped mask cell, a wrong shape): all must be refused;
* 3-8 common mistakes per skill: refused and named (where several give the same typed answer, all of them).

and counts ``right_refused``, ``wrong_accepted`` and ``misnamed`` (a mistake's answer whose diagnosis leaves
out that mistake, or names a mistake whose own answer is far from what was typed). Shape answers of the
wrong shape must be told which way to change it. ``python -m tests.practice.learner_probes`` prints the
report.
"""
from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np

# --------------------------------------------------------------------------------------------- a learner's pen


class Pen:
    """Exact arithmetic by default; ``r(x)`` is a value the learner writes down (rounded when this pen rounds)."""

    def __init__(self, decimals: int | None = None, p: float = 0.0, rng: random.Random | None = None,
                 half_up: bool = True) -> None:
        self.decimals, self.p, self.rng, self.half_up = decimals, p, rng or random.Random(0), half_up

    def r(self, x: float) -> float:
        x = float(x)
        if self.decimals is None or not (self.p >= 1 or self.rng.random() < self.p):
            return x
        if self.half_up:
            scale = 10 ** self.decimals
            return math.floor(x * scale + 0.5 + 1e-9) / scale
        return round(x, self.decimals)

    def softmax(self, row, keep=None, shift=False):
        """exp of each kept entry (``shift``: of entry − max), their sum, each exp / sum, all written down."""
        keep = [True] * len(row) if keep is None else keep
        top = max(v for v, k in zip(row, keep) if k) if shift else 0.0
        e = [self.r(math.exp(v - top)) if k else 0.0 for v, k in zip(row, keep)]
        s = self.r(sum(e))
        return [self.r(v / s) if k else 0.0 for v, k in zip(e, keep)]

    def mix(self, w, rows):
        """Σ_j w_j · rows[j], each product and sum written down."""
        return [self.r(sum(self.r(wj * row[c]) for wj, row in zip(w, rows))) for c in range(len(rows[0]))]


EXACT = Pen()


def np_softmax(x, axis=-1):
    """Softmax of ``x`` along ``axis`` (numpy, max-shifted; −inf entries get weight 0)."""
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# --------------------------------------------------------------------------------------------- oracles


@dataclass
class Oracle:
    """The right answer, the hand working (``working(pen)`` for rounded skills), other working orders, other
    right answers, and the answers of the common mistakes (name -> value; a tuple of names when several
    catalogue names describe the same slip)."""

    right: Any
    mistakes: dict[Any, Any] = field(default_factory=dict)
    working: Callable[[Pen], Any] | None = None
    orders: tuple[Callable[[Pen], Any], ...] = ()
    also_right: list = field(default_factory=list)


ORACLES: dict[str, Callable[[dict], Oracle]] = {}


def oracle(name):
    """Register the decorated function as the oracle of skill ``name``."""
    def wrap(fn):
        ORACLES[name] = fn
        return fn
    return wrap


def _onehot(v):
    v = np.asarray(v, dtype=float)
    return (v == v.max()).astype(float)


# ---- 00 warm-up
@oracle("warmup_softmax")
def _(d):
    x = np.array(d["x"], float)
    return Oracle(np_softmax(x), {"normalize_without_exp": x / x.sum(), "argmax_lookup": _onehot(x),
                                  "softmax_no_normalise": np.exp(x)},
                  working=lambda m: m.softmax(d["x"]), orders=(lambda m: m.softmax(d["x"], shift=True),))


@oracle("warmup_scores_shape")
def _(d):
    L, S, dk = d["L"], d["S"], d["d_k"]
    return Oracle((L, S), {"qt_k": (dk, dk), ("k_qt", "cross_shape_swapped"): (S, L), "scores_as_output": (L, dk)})


# ---- 01 routing
def _lookup_scores(d):
    return np.array(d["K"], float) @ np.array(d["q"], float)


@oracle("soft_lookup_weights")
def _(d):
    s = _lookup_scores(d)
    scores = [float(v) for v in s]
    return Oracle(np_softmax(s), {
        "normalize_without_exp": s / s.sum(), "argmax_lookup": _onehot(s), "softmax_wrong_axis": np.ones(3),
        "scaled_lookup": np_softmax(s / math.sqrt(2)), "softmax_no_normalise": np.exp(s),
    }, working=lambda m: m.softmax(scores), orders=(lambda m: m.softmax(scores, shift=True),))


@oracle("soft_lookup_output")
def _(d):
    s = _lookup_scores(d)
    V, K = np.array(d["V"], float), np.array(d["K"], float)
    w = np_softmax(s)
    scores = [float(v) for v in s]
    return Oracle(w @ V, {
        "argmax_lookup": V[int(np.argmax(s))], "softmax_wrong_axis": V.sum(0),
        "normalize_without_exp": (s / s.sum()) @ V, "scaled_lookup": np_softmax(s / math.sqrt(2)) @ V,
        "softmax_no_normalise": np.exp(s) @ V, "lookup_ignores_weights": V.mean(0),
        "lookup_mixes_keys": w @ K,
    }, working=lambda m: m.mix(m.softmax(scores), d["V"]),
        orders=(lambda m: m.mix(m.softmax(scores, shift=True), d["V"]),))


@oracle("path_lengths")
def _(d):
    n, k = d["n"], d["kernel"]
    cnn = -(-(n - 1) // (k - 1))
    return Oracle([n - 1, cnn, 1], {
        "path_counts_tokens": [n, cnn, 1], "cnn_reach_k": [n - 1, -(-(n - 1) // k), 1],
        "cnn_floor_division": [n - 1, (n - 1) // (k - 1), 1], "attention_no_shortcut": [n - 1, cnn, n - 1],
    })


# ---- 02 attention
@oracle("sdpa_scores")
def _(d):
    Q, K = np.array(d["Q"], float), np.array(d["K"], float)

    def working(m):
        root = m.r(math.sqrt(4))
        return [[m.r(float(q @ k) / root) for k in K] for q in Q]

    mistakes = {"no_scale": Q @ K.T, "scale_by_dk": Q @ K.T / 4, "k_qt": K @ Q.T / 2}
    if len(Q) == len(K):  # Qᵀ K is defined only when there are as many queries as keys
        mistakes["qt_k"] = Q.T @ K
    return Oracle(Q @ K.T / 2, mistakes, working=working)


@oracle("sdpa_softmax_row")
def _(d):
    s = np.array(d["scores"], float)
    e = np.exp(s)
    return Oracle(np_softmax(s), {
        "softmax_wrong_axis": np_softmax(s, axis=0), "normalize_without_exp": s / s.sum(1, keepdims=True),
        "softmax_no_normalise": e, "argmax_lookup": np.array([_onehot(r) for r in s]),
        "softmax_global_sum": e / e.sum(),
    }, working=lambda m: [m.softmax(r) for r in d["scores"]],
        orders=(lambda m: [m.softmax(r, shift=True) for r in d["scores"]],))


@oracle("sdpa_output")
def _(d):
    A, V = np.array(d["A"], float), np.array(d["V"], float)
    return Oracle(A @ V, {"av_transposed": A.T @ V, "av_v_transposed": A @ V.T, "va_instead_of_av": V @ A,
                          "lookup_ignores_weights": np.tile(V.mean(0), (2, 1))},
                  working=lambda m: [m.mix(a, d["V"]) for a in d["A"]])


@oracle("sdpa_full")
def _(d):
    Q, K, V = (np.array(d[k], float) for k in "QKV")
    s = Q @ K.T / math.sqrt(2)
    A = np_softmax(s)

    def working(m, first=None):
        root = m.r(math.sqrt(2))
        q = [[m.r(x / root) for x in r] for r in d["Q"]] if first == "Q" else d["Q"]
        k = [[m.r(x / root) for x in r] for r in d["K"]] if first == "K" else d["K"]
        if first is None:
            sc = [[m.r(sum(a * b for a, b in zip(qi, kj)) / root) for kj in k] for qi in q]
        else:
            sc = [[m.r(sum(a * b for a, b in zip(qi, kj))) for kj in k] for qi in q]
        return [m.mix(m.softmax(row), d["V"]) for row in sc]

    mistakes = {"argmax_lookup": np.array([_onehot(r) for r in s]) @ V, "av_v_transposed": A @ V.T}
    if np.all(s.sum(1) != 0):
        mistakes["normalize_without_exp"] = (s / s.sum(1, keepdims=True)) @ V
    return Oracle(A @ V, {
        **mistakes,
        "no_scale": np_softmax(Q @ K.T) @ V, "scale_by_dk": np_softmax(Q @ K.T / 2) @ V,
        "softmax_wrong_axis": np_softmax(s, axis=0) @ V, "av_transposed": A.T @ V,
        "k_qt": np_softmax(K @ Q.T / math.sqrt(2)) @ V, "softmax_no_normalise": np.exp(s) @ V,
        "lookup_ignores_weights": np.tile(V.mean(0), (2, 1)), "va_instead_of_av": V @ A,
    }, working=working, orders=(lambda m: working(m, "Q"), lambda m: working(m, "K")))


@oracle("sdpa_scale")
def _(d):
    dm, h = d["d_model"], d["n_heads"]
    return Oracle(math.sqrt(dm / h), {"scale_by_d_model": math.sqrt(dm), "scale_by_dk": dm / h, "no_scale": 1.0,
                                      "scale_by_sqrt_heads": math.sqrt(h)},
                  working=lambda m: math.sqrt(dm // h), also_right=[f"sqrt({dm // h})", f"√({dm}/{h})"])


# ---- 03 masks
def _grid(rows, cols, f):
    return np.array([[bool(f(i, j)) for j in range(cols)] for i in range(rows)])


def _causal_oracle(d):
    L, S = d["L"], d["S"]
    off, pad, w = S - L, d.get("pad", 0), d.get("window", 0)
    real = (lambda j: j >= pad) if d.get("side") == "start" else (lambda j: j < S - pad)
    near = (lambda i, j: j > i + off - w) if w else (lambda i, j: True)
    mistakes = {"inverted_mask": _grid(L, S, lambda i, j: not (j <= i + off and real(j) and near(i, j))),
                "causal_excludes_diagonal": _grid(L, S, lambda i, j: j < i + off and real(j) and near(i, j)),
                "causal_upper_triangle": _grid(L, S, lambda i, j: j >= i + off and real(j))}
    if pad:
        mistakes["missing_padding_mask"] = _grid(L, S, lambda i, j: j <= i + off and near(i, j))
    if S > L:
        mistakes["causal_kv_misaligned"] = _grid(L, S, lambda i, j: j <= i and real(j) and (not w or j > i - w))
        mistakes["rect_mask_square"] = _grid(S, S, lambda i, j: j <= i and real(j))
    return Oracle(_grid(L, S, lambda i, j: j <= i + off and real(j) and near(i, j)), mistakes)


ORACLES["causal_mask_build"] = _causal_oracle
ORACLES["rect_causal_mask"] = _causal_oracle


@oracle("padding_mask_build")
def _(d):
    S, lens = d["S"], d["lengths"]
    extra = {}
    if max(lens) < S:
        extra["padding_width_from_lengths"] = np.array([[j < n for j in range(max(lens))] for n in lens])
    return Oracle(np.array([[j < n for j in range(S)] for n in lens]), {
        **extra,
        "inverted_mask": np.array([[j >= n for j in range(S)] for n in lens]),
        "padding_at_start": np.array([[j >= S - n for j in range(S)] for n in lens]),
        "length_off_by_one": np.array([[j <= n for j in range(S)] for n in lens]),
    })


@oracle("combine_masks_build")
def _(d):
    L, n = d["L"], d["length"]
    return Oracle(_grid(L, L, lambda i, j: j <= i and j < n), {
        "combine_with_or": _grid(L, L, lambda i, j: j <= i or j < n),
        "inverted_mask": _grid(L, L, lambda i, j: not (j <= i and j < n)),
        "missing_causal_mask": _grid(L, L, lambda i, j: j < n),
        "missing_padding_mask": _grid(L, L, lambda i, j: j <= i),
        "mask_padded_queries": _grid(L, L, lambda i, j: j <= i and i < n),
        "causal_excludes_diagonal": _grid(L, L, lambda i, j: j < i and j < n),
        "causal_upper_triangle": _grid(L, L, lambda i, j: j >= i and j < n),
    })


@oracle("masked_softmax")
def _(d):
    s = np.array(d["scores"], float)
    L = len(s)
    tril = np.tril(np.ones((L, L), bool))
    masked = np.where(tril, s, -np.inf)
    return Oracle(np_softmax(masked), {
        "softmax_wrong_axis": np_softmax(masked, axis=0),
        "mask_after_softmax": np_softmax(s) * tril, "missing_causal_mask": np_softmax(s),
        "mask_fill_zero": np_softmax(np.where(tril, s, 0.0)),
        "causal_upper_triangle": np_softmax(np.where(tril.T, s, -np.inf)),
        "softmax_no_normalise": np.where(tril, np.exp(s), 0.0),
        # the diagonal excluded: row 0 keeps no key (zeros), or a learner keeps it on key 0
        "causal_excludes_diagonal": np.nan_to_num(np_softmax(np.where(np.tril(tril, -1), s, -np.inf))),
        "causal_excludes_diagonal#row 0 on key 0": np.vstack([np.eye(L)[0], np_softmax(
            np.where(np.tril(tril, -1), s, -np.inf)[1:])]),
        "softmax_global_sum": np.where(tril, np.exp(s), 0.0) / np.where(tril, np.exp(s), 0.0).sum(),
        **({"normalize_without_exp": np.where(tril, s, 0.0) / np.where(tril, s, 0.0).sum(1, keepdims=True)}
           if np.all(np.where(tril, s, 0.0).sum(1) != 0) else {}),
        **({"argmax_lookup": np.array([np.eye(L)[int(np.argmax(s[i, : i + 1]))] for i in range(L)])}
           if all(list(s[i, : i + 1]).count(s[i, : i + 1].max()) == 1 for i in range(L)) else {}),
    }, working=lambda m: [m.softmax(r, [j <= i for j in range(L)]) for i, r in enumerate(d["scores"])],
        orders=(lambda m: [m.softmax(r, [j <= i for j in range(L)], shift=True) for i, r in enumerate(d["scores"])],))


# ---- 04 positions
@oracle("pe_value")
def _(d):
    dm, pos, col = d["d_model"], d["pos"], d["col"]

    def pe(c, exponent=None, swap=False, degrees=False):
        pair = c - c % 2 if exponent is None else exponent
        angle = pos / 10000 ** (pair / dm)
        if degrees:
            angle = math.radians(angle)
        return math.sin(angle) if (c % 2 == 0) != swap else math.cos(angle)

    half = dm // 2
    halves = (math.sin(pos / 10000 ** (2 * col / dm)) if col < half
              else math.cos(pos / 10000 ** (2 * (col - half) / dm)))

    def working(m):
        pair = col - col % 2
        den = m.r(10000 ** (pair / dm)) if pair else 1
        angle = m.r(pos / den)
        return math.sin(angle) if col % 2 == 0 else math.cos(angle)

    mistakes = {"pe_sin_cos_swapped": pe(col, swap=True), "angle_in_degrees": pe(col, degrees=True)}
    if col:  # column 0 is sin(pos) either way
        mistakes["pe_halves_not_interleaved"] = halves
    if col % 2:
        mistakes["pe_pair_exponent"] = pe(col, exponent=col)
    return Oracle(pe(col), mistakes, working=working)


@oracle("permutation_effect")
def _(d):
    p = list(d["perm"])
    return Oracle(p, {"inverse_permutation": list(np.argsort(p)), "permutation_invariant": list(range(len(p))),
                      "index_from_one": [i + 1 for i in p]})


# ---- 05 heads
@oracle("mha_shape_trace")
def _(d):
    B, L, dm, h = d["B"], d["L"], d["d_model"], d["n_heads"]
    return Oracle((B, h, L, dm // h), {"reshape_without_transpose": (B, L, h, dm // h),
                                       "split_keeps_dmodel": (B, h, L, dm), "split_forgets_heads": (B, L, dm // h)})


@oracle("mha_scores_shape")
def _(d):
    B, L, S, dm, h = d["B"], d["L"], d["S"], d["d_model"], d["n_heads"]
    mistakes = {"scores_without_head_axis": (B, L, S), "scores_as_output": (B, h, L, dm // h),
                "reshape_without_transpose": (B, L, h, S)}
    if S != L:
        mistakes.update({("scores_keys_first", "cross_shape_swapped"): (B, h, S, L),
                         "keys_length_from_queries": (B, h, L, L)})
    return Oracle((B, h, L, S), mistakes)


@oracle("split_heads_values")
def _(d):
    x, h = np.array(d["x"], float), d["head"]
    return Oracle(x[:, 2 * h: 2 * h + 2], {"reshape_without_transpose": x[h].reshape(2, 2),
                                           "heads_interleaved": x[:, h::2],
                                           "index_from_one": x[:, 2 * (1 - h): 2 * (1 - h) + 2]})


@oracle("merge_heads_values")
def _(d):
    H = np.array(d["heads"], float)  # (H, L, d_k)
    return Oracle(np.concatenate([H[0], H[1]], axis=1), {
        "heads_wrong_order": np.concatenate([H[1], H[0]], axis=1), "reshape_without_transpose": H.reshape(2, 4),
        "merge_stacks_rows": H.reshape(4, 2)})


@oracle("mha_param_count")
def _(d):
    dm, h, bias = d["d_model"], d["n_heads"], d["bias"]
    dk = dm // h
    right = 4 * dm * dm + (4 * dm if bias else 0)
    mistakes = {"forget_w_o": right * 3 // 4, "params_times_heads": right * h, "params_weights_times_heads": 4 * dm * dm * h,
                "params_one_head": 4 * dm * dk + ((3 * dk + dm) if bias else 0)}
    if bias:
        mistakes.update({"params_without_bias": 4 * dm * dm, "one_bias_forgotten": right - dm,
                         "params_one_head#full biases": 4 * dm * dk + 4 * dm, "params_one_head#no biases": 4 * dm * dk})
    else:
        mistakes["count_bias_when_disabled"] = 4 * dm * dm + 4 * dm
    return Oracle(right, mistakes, also_right=[f"4*{dm}^2" + (f" + 4*{dm}" if bias else "")])


# ---- 06 blocks
@oracle("ffn_param_count")
def _(d):
    dm, ff = d["d_model"], d["d_ff"]
    right = 2 * dm * ff + ff + dm
    return Oracle(right, {"params_without_bias": 2 * dm * ff, "ffn_dff_equals_dmodel": 2 * dm * dm + 2 * dm,
                          "ffn_count_one_layer": dm * ff + ff, "one_bias_forgotten": right - dm,
                          "one_bias_forgotten#2": right - ff})


@oracle("block_param_count")
def _(d):
    dm, ff, h = d["d_model"], d["d_ff"], d["n_heads"]
    dk = dm // h
    attn, ffn, ln = 4 * dm * dm + 4 * dm, 2 * dm * ff + ff + dm, 2 * dm
    right = attn + ffn + 2 * ln
    return Oracle(right, {
        "forget_w_o": right - dm * dm - dm, "forget_layernorm_params": attn + ffn,
        "params_without_bias": 4 * dm * dm + 2 * dm * ff + 2 * dm,
        "ffn_dff_equals_dmodel": attn + 2 * dm * dm + 2 * dm + 2 * ln, "params_times_heads": attn * h + ffn + 2 * ln,
        "layernorm_gain_only": right - 2 * dm, "one_bias_forgotten": right - dm,
        "params_one_head": 4 * dm * dk + 3 * dk + dm + ffn + 2 * ln,
        "params_one_head#full biases": 4 * dm * dk + 4 * dm + ffn + 2 * ln,
        "params_weights_times_heads": right + 4 * dm * dm * (h - 1),
        "one_bias_forgotten#2": right - ff,
        "ffn_count_one_layer": right - (ff * dm + dm), "ffn_count_one_layer#W_2": right - (dm * ff + ff),
    })


@oracle("layernorm_by_hand")
def _(d):
    x = np.array(d["x"], float)
    mu = x.mean()

    def working(m):
        mean = m.r(sum(d["x"]) / 4)
        dev = [m.r(v - mean) for v in d["x"]]
        var = m.r(sum(m.r(e * e) for e in dev) / 4)
        sd = m.r(math.sqrt(var))
        return [m.r(e / sd) for e in dev]

    def working2(m):
        mean = m.r(sum(d["x"]) / 4)
        var = m.r(m.r(sum(m.r(v * v) for v in d["x"]) / 4) - m.r(mean * mean))
        sd = m.r(math.sqrt(var))
        return [m.r(m.r(v - mean) / sd) for v in d["x"]]

    return Oracle((x - mu) / x.std(), {
        "layernorm_unbiased_var": (x - mu) / x.std(ddof=1), "layernorm_no_center": x / x.std(),
        "layernorm_divide_by_variance": (x - mu) / x.var(),
    }, working=working, orders=(working2,))


# ---- 07 encoder-decoder
@oracle("choose_mask")
def _(d):
    setting, L, S, real = d["setting"], d["L"], d["S"], d["real"]
    dec = setting == "decoder"
    start = d.get("side") == "start"  # padding before the tokens (left padding)

    def key(j):
        return j >= S - real if start else j < real

    def query(i):
        return i >= L - real if start else i < real

    def g(f):
        return _grid(L, S, f)

    right = g(lambda i, j: key(j) and (j <= i or not dec))
    mistakes = {"inverted_mask": ~right}
    if dec:
        mistakes.update({"missing_causal_mask": g(lambda i, j: key(j)),
                         "missing_padding_mask": g(lambda i, j: j <= i),
                         "combine_with_or": g(lambda i, j: j <= i or key(j)),
                         "causal_excludes_diagonal": g(lambda i, j: j < i and key(j)),
                         "causal_upper_triangle": g(lambda i, j: j >= i and key(j)),
                         "mask_padded_queries": g(lambda i, j: j <= i and query(i))})
    else:
        mistakes.update({"needless_causal_mask": g(lambda i, j: j <= i and key(j)),
                         "missing_padding_mask": g(lambda i, j: True)})
        if setting == "encoder":
            mistakes["mask_padded_queries"] = g(lambda i, j: query(i))
        if setting == "cross" and S != L:
            mistakes["keys_length_from_queries"] = _grid(L, L, lambda i, j: j >= L - real if start else j < real)
    return Oracle(right, mistakes)


@oracle("cross_attention_shapes")
def _(d):
    B, L, S, dm, h = d["B"], d["L"], d["S"], d["d_model"], d["n_heads"]
    return Oracle((B, h, L, S), {"cross_shape_swapped": (B, h, S, L), "scores_without_head_axis": (B, L, S),
                                 "keys_length_from_queries": (B, h, L, L), "scores_as_output": (B, h, L, dm // h)})


# ---- 08 decoding
@oracle("next_token_targets")
def _(d):
    ids, T = d["ids"], d["T"]
    return Oracle(ids[1:T + 1], {"target_no_shift": ids[:T], "target_shift_two": ids[2:T + 2],
                                 "targets_block_plus_one": ids[1:T + 2]})


@oracle("top_k_probs")
def _(d):
    z, k = np.array(d["logits"], float), d["k"]

    def keep(kk, largest=True):
        order = np.argsort(-z if largest else z)
        out = np.zeros(5, bool)
        out[order[:kk]] = True
        return out

    kept = keep(k)

    def soft(mask):
        return np.where(mask, np_softmax(np.where(mask, z, -np.inf)), 0.0)

    mistakes = {"top_k_plus_one": soft(keep(k + 1)), "top_k_no_renorm": np_softmax(z) * kept,
                "top_k_as_greedy": soft(keep(1)), "softmax_no_normalise": np.where(kept, np.exp(z), 0.0),
                "top_k_smallest": soft(keep(k, largest=False))}
    if z[kept].sum() != 0:
        mistakes["top_k_linear_renorm"] = np.where(kept, z / z[kept].sum(), 0.0)
    logits = d["logits"]
    kl = [bool(v) for v in kept]

    def renorm(m):
        p = m.softmax(logits)
        tot = m.r(sum(v for v, kk in zip(p, kl) if kk))
        return [m.r(v / tot) if kk else 0.0 for v, kk in zip(p, kl)]

    return Oracle(soft(kept), mistakes, working=lambda m: m.softmax(logits, kl),
                  orders=(lambda m: m.softmax(logits, kl, shift=True), renorm))


@oracle("top_p_tokens")
def _(d):
    probs, p = d["probs"], d["p"]

    def nucleus(order, crossing=True):
        kept, mass = [], 0.0
        for i in order:
            if mass >= p - 1e-9 or (not crossing and mass + probs[i] >= p - 1e-9):
                break
            kept.append(i)
            mass += probs[i]
        return sorted(kept)

    desc = sorted(range(5), key=lambda i: -probs[i])
    right = nucleus(desc)
    mistakes = {"top_p_unsorted": nucleus(range(5)), "top_p_one_past": sorted(right + [desc[len(right)]]),
                "ranks_not_ids": list(range(len(right))), "index_from_one": [i + 1 for i in right]}
    if nucleus(desc, False):
        mistakes["top_p_excludes_crossing"] = nucleus(desc, False)
    return Oracle(right, mistakes)


@oracle("greedy_next_token")
def _(d):
    z = d["logits"]
    best = int(np.argmax(z))
    mistakes = {"greedy_one_based": best + 1, "greedy_argmin": int(np.argmin(z))}
    if float(max(z)).is_integer():
        mistakes["greedy_value_not_id"] = int(max(z))
    return Oracle(best, mistakes)


@oracle("perplexity")
def _(d):
    form = d["form"]
    if form == "probs":
        p = np.array(d["probs"], float)
        nll = float(-np.log(p).mean())
        mistakes = {"loss_summed": math.exp(-np.log(p).sum()), "ppl_log2_then_exp": math.exp(-np.log2(p).mean()),
                    "ppl_log10_then_exp": math.exp(-np.log10(p).mean()), "ppl_arithmetic_mean": float((1 / p).mean())}
        also: list = []

        def working(m):
            terms = [m.r(-math.log(v)) for v in d["probs"]]
            return math.exp(m.r(sum(terms) / len(terms)))
    else:
        nll = d["loss"] / (d["n"] if form == "sum" else 1)
        mistakes = {"loss_summed": math.exp(d["loss"])} if form == "sum" else {}
        also = [f"exp({d['loss']:.2f})"] if form == "mean" else [f"exp({d['loss']:.2f}/{d['n']})"]

        def working(m):
            return math.exp(m.r(d["loss"] / d["n"])) if form == "sum" else math.exp(d["loss"])
    mistakes.update({"ppl_base2_of_nats": 2 ** nll, "ppl_reciprocal": math.exp(-nll), "ppl_is_loss": nll})
    return Oracle(math.exp(nll), mistakes, working=working, also_right=also)


@oracle("beam_search_steps")
def _(d):
    V, k, ask = d["V"], d["k"], d["ask"]
    p1 = [round(10 * v) for v in d["first"]]
    p2 = [[round(10 * v) for v in row] for row in d["next"]]

    def beam(width, score=lambda a, b: p1[a] * p2[a][b], first=None):
        """The beam after step 2 (None when a tie decides which sequences are kept or their order)."""
        starts = first if first is not None else sorted(range(V), key=lambda a: -p1[a])[:width]
        cands = sorted(((a, b) for a in starts for b in range(V)), key=lambda s: -score(*s))
        top = [score(*s) for s in cands[:width + 1]]
        return None if len(set(top)) < len(top) else cands[:width]

    def as_answer(seqs, value=lambda a, b: p1[a] * p2[a][b] / 100):
        if seqs is None:
            return None
        if ask == "greedy":  # a slip that leaves the best sequence as it is does not bear on this question
            answer = [list(beam(1)[0]), list(seqs[0])]
            return None if seqs is not right_beam and answer == right else answer
        if ask == "sequences":
            return [list(s) for s in seqs]
        if ask == "probs":
            return [value(*s) for s in seqs]
        return [list(beam(1)[0]), list(seqs[0])]

    right_beam, right = beam(k), None
    right = as_answer(right_beam)
    g1 = sorted(range(V), key=lambda a: -p1[a])[0]
    def slip(score, value):
        """A ranking slip's typed answer, also where a tie decides its order but not what is typed: the
        scores of the kept sequences (asked for their probabilities), or a best sequence that is not tied."""
        seqs = beam(k, score)
        if seqs is not None:
            return as_answer(seqs, value)
        starts = sorted(range(V), key=lambda a: -p1[a])[:k]
        ranked = sorted(((a, b) for a in starts for b in range(V)), key=lambda s: -score(*s))
        if ask == "probs":
            return [value(*s) for s in ranked[:k]]
        if ask == "greedy" and score(*ranked[0]) > score(*ranked[1]):
            answer = [list(beam(1)[0]), list(ranked[0])]
            return None if answer == right else answer
        return None

    mistakes = {"beam_rank_last_step": slip(lambda a, b: p2[a][b], lambda a, b: p2[a][b] / 10),
                "beam_sum_probs": slip(lambda a, b: p1[a] + p2[a][b], lambda a, b: (p1[a] + p2[a][b]) / 10)}
    if ask == "greedy":
        g = list(beam(1)[0])
        mistakes["beam_as_greedy"] = [g, g]
    else:
        mistakes["beam_as_greedy"] = as_answer(beam(1))
        mistakes["beam_greedy_first_step"] = as_answer(beam(k, first=[g1]))
        mistakes["beam_not_best_first"] = as_answer(right_beam[::-1])
    return Oracle(right, mistakes)


# ---- 09 language model
@oracle("gpt_param_count")
def _(d):
    Vv, Bk, dm, h, n = d["vocab_size"], d["block_size"], d["d_model"], d["n_heads"], d["n_layers"]
    dk = dm // h
    attn = 4 * dm * dm + 4 * dm
    ffn = 8 * dm * dm + 4 * dm + dm
    block = attn + ffn + 4 * dm
    right = Vv * dm + Bk * dm + n * block + 2 * dm
    return Oracle(right, {
        "forget_position_embedding": right - Bk * dm, "forget_layers": right - (n - 1) * block,
        "params_without_bias": Vv * dm + Bk * dm + n * (12 * dm * dm + 2 * dm) + dm,
        "tied_head_counted_twice": right + Vv * dm, "params_times_heads": right + n * attn * (h - 1),
        "forget_layernorm_params": right - n * 4 * dm - 2 * dm, "final_layernorm_missing": right - 2 * dm,
        "layernorm_gain_only": right - (2 * n + 1) * dm, "tied_head_bias": right + Vv * dm + Vv,
        "head_bias_added": right + Vv, "one_bias_forgotten": right - n * dm,
        "one_bias_forgotten#2": right - n * 4 * dm,
        "params_one_head": right - n * attn + n * (4 * dm * dk + 3 * dk + dm),
        "params_one_head#full biases": right - n * attn + n * (4 * dm * dk + 4 * dm),
        "params_weights_times_heads": right + n * 4 * dm * dm * (h - 1),
        "ffn_count_one_layer": right - n * (4 * dm * dm + dm), "ffn_count_one_layer#W_1": right - n * (4 * dm * dm + 4 * dm),
        "ffn_dff_equals_dmodel": right - n * (6 * dm * dm + 3 * dm), "forget_w_o": right - n * (dm * dm + dm),
    })


@oracle("uniform_loss")
def _(d):
    V = d["vocab_size"]
    return Oracle(math.log(V), {"log2_instead_of_ln": math.log2(V), "log10_instead_of_ln": math.log10(V),
                                "loss_is_probability": 1 / V, "loss_missing_minus": -math.log(V)},
                  working=lambda m: math.log(V), also_right=[f"ln({V})", f"ln({V}) nats"])


@oracle("batch_shapes")
def _(d):
    B, T = d["B"], d["T"]
    return Oracle((B, T), {"targets_block_plus_one": (B, T + 1), "batch_shape_swapped": (T, B),
                           "batch_flattened": (B * T,)})


# ---- 10 costs
_NBYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


def _memory_slips(mistakes: dict, right: int, B: int, b: int) -> dict:
    """``mistakes`` with the two slips every memory count shares: the batch forgotten (when B > 1)
    and 4 bytes a number assumed whatever the dtype (when it is not 4)."""
    if B > 1:
        mistakes["forget_batch"] = right // B
    if b != 4:
        mistakes["bytes_fixed_float32"] = right // b * 4
    return mistakes


@oracle("kv_cache_bytes")
def _(d):
    n, dm, h, L, B, b = d["n_layers"], d["d_model"], d["n_heads"], d["L"], d["B"], _NBYTES[d["dtype"]]
    right = 2 * n * B * L * dm * b
    mistakes = {"kv_forget_factor_two": right // 2, "forget_layers": right // n, "bytes_as_numbers": right // b,
                "kv_times_heads": right * h}
    return Oracle(right, _memory_slips(mistakes, right, B, b),
                  also_right=[f"2 * {n} * {B} * {L} * {dm} * {b}", f"{right} bytes"])


@oracle("attention_memory")
def _(d):
    B, H, L, b = d["B"], d["H"], d["L"], _NBYTES[d["dtype"]]
    right = B * H * L * L * b
    mistakes = {"scores_forget_heads": right // H, "bytes_as_numbers": right // b, "scores_linear_in_length": right // L}
    return Oracle(right, _memory_slips(mistakes, right, B, b), also_right=[f"{B}·{H}·{L}^2·{b}", f"{right:,} B"])


@oracle("attention_flops")
def _(d):
    B, H, L, dk = d["B"], d["H"], d["L"], d["d_k"]
    right = 2 * 2 * B * H * L * L * dk
    mistakes = {("flops_forget_factor_two", "flops_one_matmul"): right // 2, "scores_forget_heads": right // H}
    if B > 1:
        mistakes["forget_batch"] = right // B
    mistakes["scores_linear_in_length"] = 2 * 2 * B * H * L * dk
    return Oracle(right, mistakes, also_right=[f"2*2*{B}*{H}*{L}*{L}*{dk}", f"{right} FLOPs"])


# ---- concept items: the right option(s) and each distractor's own tag (read from the options shown)
def _choice_oracle(d):
    opts = d["options"]
    right = next(chr(65 + i) for i, (_, t) in enumerate(opts) if t is None)
    return Oracle(right, {t: chr(65 + i) for i, (_, t) in enumerate(opts) if t is not None})


def _choices_oracle(d):
    opts = d["options"]
    right = [chr(65 + i) for i, (_, (yes, _m)) in enumerate(opts) if yes == "yes"]
    mistakes = {}
    for i, (_, (_yes, m)) in enumerate(opts):
        mistakes[m] = sorted(set(right) ^ {chr(65 + i)})
    return Oracle(right, mistakes)


def _order_oracle(d):
    where = {tag: chr(65 + i) for i, (_, tag) in enumerate(d["options"])}

    def order(positions):
        return [where[p] for p in positions]
    return Oracle(order(range(5)), {"mask_after_softmax": order([0, 1, 3, 2, 4]),
                                    "scale_after_softmax": order([0, 2, 3, 1, 4]),
                                    "values_before_softmax": order([0, 1, 2, 4, 3])},
                  also_right=[order([0, 2, 1, 3, 4])])


for _name in ("concept_routing", "concept_scale", "concept_positions", "concept_heads", "concept_pre_post_ln",
              "concept_family", "concept_exposure_bias", "concept_gpt"):
    ORACLES[_name] = _choice_oracle
for _name in ("concept_causal_where", "concept_kv_cache"):
    ORACLES[_name] = _choices_oracle
ORACLES["concept_mask_order"] = _order_oracle


# --------------------------------------------------------------------------------------------- forms of answers


def _num(x: float, decimals: int | None) -> str:
    return f"{x:.{decimals}f}" if decimals is not None else _plain_number(x)


def _plain_number(x: float) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


def _fraction_text(x: float) -> str | None:
    f = Fraction(float(x)).limit_denominator(20)
    if f.denominator == 1 or abs(float(f) - float(x)) > 1e-12:
        return None
    return f"{f.numerator}/{f.denominator}"


def typed(value, decimals):
    """The answer as typed to ``decimals`` places (numbers rounded), nested lists for arrays."""
    a = np.asarray(value, dtype=float)
    if decimals is None:
        return a
    return np.round(a + 0.0, decimals)


def _text_forms(arr: np.ndarray, decimals: int | None) -> list[str]:
    """Text forms of a vector or matrix of numbers."""
    fmt = lambda x: _num(x, decimals)  # noqa: E731
    if arr.ndim == 1:
        items = [fmt(x) for x in arr]
        return ["[" + ", ".join(items) + "]", " ".join(items), ", ".join(items), "(" + ", ".join(items) + ")",
                "[" + " ".join(items) + "]", "[ " + " ,".join(items) + " ]"]
    rows = [[fmt(x) for x in r] for r in arr]
    return ["[" + ", ".join("[" + ", ".join(r) + "]" for r in rows) + "]",
            "; ".join(" ".join(r) for r in rows),
            "[" + "\n ".join("[" + " ".join(r) + "]" for r in rows) + "]",  # numpy's printing
            "((" + "), (".join(", ".join(r) for r in rows) + "))",
            "[[" + "],[".join(",".join(r) for r in rows) + "]]",
            "\n".join(" ".join(r) for r in rows)]  # one row per line


def right_forms(o: Oracle, kind: str, decimals: int | None) -> list[tuple[str, Any]]:
    """(label, answer) pairs: the right answer in the forms a learner types."""
    out: list[tuple[str, Any]] = []
    r = o.right
    if kind == "number":
        x = float(r)
        out += [("typed", _num(x, decimals)), ("float", round(x, decimals)), ("more decimals", f"{x:.{decimals + 2}f}"),
                ("approx", f"≈ {x:.{decimals}f}"), ("full stop", f"{x:.{decimals}f}."),
                ("exact float", x), ("spaces", f"  {x:.{decimals}f} "), ("numpy", np.float64(round(x, decimals)))]
        if x < 0:
            out.append(("unicode minus", "−" + _num(-x, decimals)))
        frac = _fraction_text(x)
        if frac:
            out.append(("fraction", frac))
        if decimals:  # a decimal comma, as much of Europe writes it ("3,258" where about 3 is expected)
            out += [("decimal comma", _num(x, decimals).replace(".", ",")),
                    ("decimal comma, more decimals", f"{x:.{decimals + 1}f}".replace(".", ","))]
    elif kind == "int":
        n = int(r)
        out += [("plain", str(n)), ("int", n), ("float", float(n)), ("commas", f"{n:,}"), ("underscores", f"{n:_}"),
                ("numpy", np.int64(n))]
        mant = f"{n:e}"
        m, e = mant.split("e")
        m = m.rstrip("0").rstrip(".")
        if float(f"{m}e{int(e)}") == n:
            out += [("scientific", f"{m}e{int(e)}"), ("scientific E+", f"{m}E+{int(e):02d}")]
            if int(e) >= 3:  # as on paper: 4.129024*10^6, 4.129024 × 10^6, 4.129024·10⁶
                sup = str(int(e)).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
                out += [("times ten", f"{m}*10^{int(e)}"), ("times ten, ×", f"{m} × 10^{int(e)}"),
                        ("times ten, superscript", f"{m}·10{sup}"), ("times ten, **", f"{m} * 10**{int(e)}")]
        if n >= 10000:
            out.append(("thin spaces", f"{n:,}".replace(",", " ")))
    elif kind == "shape":
        t = tuple(int(v) for v in r)
        body = ", ".join(map(str, t))
        out += [("tuple", t), ("list", list(t)), ("text", f"({body})"), ("brackets", f"[{body}]"),
                ("x", "x".join(map(str, t))), ("times", " × ".join(map(str, t))), ("torch.Size", f"torch.Size([{body}])"),
                ("no spaces", f"({','.join(map(str, t))})")]
        if len(t) == 1:
            out.append(("one-tuple", f"({t[0]},)"))
    elif kind in ("matrix", "vector"):
        a = typed(r, decimals)
        out += [("list", a.tolist()), ("numpy", a), *[(f"text {i}", s) for i, s in enumerate(_text_forms(a, decimals))]]
        if a.ndim == 2 and a.shape[0] > 1:
            out.append(("flat", " ".join(_num(x, decimals) for x in a.ravel())))
        if decimals is not None:
            out.append(("more decimals", _text_forms(np.round(np.asarray(r, float), decimals + 2), decimals + 2)[0]))
        else:
            out.append(("floats", np.asarray(r, float).tolist()))
        fr = [_fraction_text(v) for v in np.asarray(r, float).ravel()]
        if all(fr) and any("/" in f for f in fr):
            flat = iter(fr)
            if a.ndim == 1:
                out.append(("fractions", "[" + ", ".join(flat) + "]"))
            else:
                out.append(("fractions", "[" + ", ".join("[" + ", ".join(next(flat) for _ in row) + "]" for row in a) + "]"))
    elif kind == "mask":
        m = np.asarray(r, bool)
        ints = m.astype(int)
        add = np.where(m, 0.0, -np.inf)
        out += [("bool", m.tolist()), ("numpy bool", m), ("0/1", ints.tolist()),
                ("0/1 text", "; ".join(" ".join(map(str, row)) for row in ints)),
                ("0/1 lines", "\n".join(" ".join(map(str, row)) for row in ints)),
                ("T/F", "; ".join(" ".join("T" if v else "F" for v in row) for row in m)),
                ("True/False text", str(m.tolist())), ("true/false text", str(m.tolist()).lower()),
                ("numpy print", str(m)), ("numpy 0/1 print", str(ints)),
                ("additive list", add.tolist())]
        for neg in ("-inf", "-Inf", "−inf", "-∞", "−∞", "float('-inf')", "-infinity", "-np.inf"):
            out.append((f"additive {neg}", "[" + ", ".join("[" + ", ".join("0" if v else neg for v in row) + "]"
                                                            for row in m) + "]"))
        out.append(("additive 0.", "[" + ", ".join("[" + ", ".join("0." if v else "-inf" for v in row) + "]"
                                                    for row in m) + "]"))
        if m.all():  # all zeros reads as 0/1, the prompt's form (everything blocked): no additive form to write
            out = [(label, a) for label, a in out if not label.startswith("additive")]
    elif kind == "int_list":
        v = [int(x) for x in r]
        out += [("list", v), ("text", str(v)), ("spaces", " ".join(map(str, v))), ("commas", ",".join(map(str, v))),
                ("tuple", tuple(v)), ("parens", "(" + ", ".join(map(str, v)) + ")")]
    elif kind == "int_set":
        v = sorted(int(x) for x in r)
        rev = v[::-1]
        out += [("list", v), ("reversed", rev), ("set", set(v)), ("set text", "{" + ", ".join(map(str, rev)) + "}"),
                ("spaces", " ".join(map(str, rev))), ("commas", ",".join(map(str, v)))]
    elif kind == "choice":
        c = r
        out += [("upper", c), ("lower", c.lower()), ("parens", f"({c.lower()})"), ("paren right", f"{c})"),
                ("dot", f"{c}."), ("spaces", f"  {c} "), ("option", f"Option {c}"), ("list", [c])]
    elif kind == "choices":
        v = list(r)
        out += [("commas", ", ".join(v)), ("reversed", ", ".join(v[::-1])), ("joined lower", "".join(v).lower()),
                ("list", v), ("and", " and ".join(v)), ("spaces", " ".join(v[::-1])), ("set", set(v))]
    elif kind == "order":
        for answer in [r] + list(o.also_right):
            v = list(answer)
            out += [("spaces", " ".join(v)), ("joined", "".join(v)), ("commas", ", ".join(v)), ("arrows", " → ".join(v)),
                    ("gt", " > ".join(v)), ("list", v), ("lower", " ".join(v).lower()), ("dashes", "-".join(v))]
    for extra in o.also_right if kind != "order" else []:
        out.append(("also right", extra))
    return out


def _rounded_workings(o: Oracle, decimals: int, rng: random.Random, n: int) -> list[np.ndarray]:
    """The answers a learner's hand working gives (every, none or some written values rounded), typed."""
    outs = []
    for working in (o.working, *o.orders):
        for half_up in (True, False):
            outs.append(np.asarray(working(Pen(decimals, 1.0, rng, half_up)), float))
        outs.append(np.asarray(working(EXACT), float))
        for _ in range(n):
            outs.append(np.asarray(working(Pen(decimals, rng.random(), rng, rng.random() < 0.5)), float))
        for extra in (1, 2):  # a careful learner keeps a digit or two more while working, then rounds (half up)
            careful = np.asarray(working(Pen(decimals + extra, 1.0, rng, True)), float)
            outs.append(np.floor(careful * 10 ** decimals + 0.5 + 1e-9) / 10 ** decimals)
    return [np.round(v, decimals) for v in outs]


def _swap_digits(text: str) -> str | None:
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    for a, b in zip(digits, digits[1:]):
        if b == a + 1 and text[a] != text[b]:
            return text[:a] + text[b] + text[a] + text[b + 1:]
    return None


def typos(o: Oracle, kind: str, decimals: int | None, lo=None, hi=None) -> list[tuple[str, Any]]:
    """(label, answer) pairs a learner mistypes: each must be refused. ``lo``/``hi``: the typed values the hand
    working reaches per entry (for rounded skills): slips go beyond them by at least two units."""
    out: list[tuple[str, Any]] = []
    r = o.right
    if kind == "number":
        x = round(float(r), decimals)
        unit = 10.0 ** -decimals
        for k in (3, 5, 10, 30):
            for sign in (1, -1):
                y = round(x + sign * k * unit, decimals)
                if y > hi + 2 * unit - 1e-12 or y < lo - 2 * unit + 1e-12:
                    out.append((f"slip {sign * k}", _num(y, decimals)))
        if abs(x) > 3 * unit:
            out.append(("sign", _num(-x, decimals)))
        s = _swap_digits(_num(x, decimals))
        if s and (float(s) > hi + 2 * unit or float(s) < lo - 2 * unit):
            out.append(("swapped digits", s))
        out.append(("×10", _num(x * 10, decimals)))
    elif kind == "int":
        n = int(r)
        out += [("+1", n + 1), ("-1", n - 1), ("×10", n * 10), ("dropped digit", int(str(n)[:-1] or 0))]
        s = _swap_digits(str(n))
        if s:
            out.append(("swapped digits", s))
    elif kind == "shape":
        t = list(r)
        out += [("first +1", tuple([t[0] + 1] + t[1:])), ("last -1", tuple(t[:-1] + [max(t[-1] - 1, 0)])),
                ("missing axis", tuple(t[:-1]))]
    elif kind in ("matrix", "vector"):
        a = typed(r, decimals).astype(float)
        unit = 10.0 ** -(decimals or 0)
        flat = a.ravel()
        for idx in range(min(flat.size, 4)):
            for k in ((5, 10) if decimals else (1,)):
                for sign in (1, -1):
                    b = flat.copy()
                    b[idx] = round(b[idx] + sign * k * unit, decimals or 0)
                    if lo is not None:
                        if lo.ravel()[idx] - 2 * unit <= b[idx] <= hi.ravel()[idx] + 2 * unit:
                            continue
                    out.append((f"entry {idx} {sign * k}", b.reshape(a.shape).tolist()))
        nonzero = [i for i in range(flat.size) if abs(flat[i]) > 2.5 * unit]
        if nonzero:
            b = flat.copy()
            b[nonzero[0]] = -b[nonzero[0]]
            out.append(("sign of one entry", b.reshape(a.shape).tolist()))
        if a.ndim == 2 and a.shape[0] == a.shape[1] and not np.allclose(a, a.T):
            out.append(("transposed", a.T.tolist()))
        out.append(("missing row" if a.ndim == 2 else "missing entry", a[:-1].tolist()))
    elif kind == "mask":
        m = np.asarray(r, bool)
        for idx in range(0, m.size, max(1, m.size // 4)):
            b = m.copy().ravel()
            b[idx] = not b[idx]
            out.append((f"flip {idx}", b.reshape(m.shape).astype(int).tolist()))
        out.append(("missing row", m[:-1].astype(int).tolist()))
    elif kind == "int_list":
        v = list(r)
        if len(v) > 1 and v[0] != v[1]:
            out.append(("swap 0 1", [v[1], v[0]] + v[2:]))
        out += [("+1 last", v[:-1] + [v[-1] + 1]), ("missing last", v[:-1])]
    elif kind == "int_set":
        v = list(r)
        out.append(("extra", sorted(set(v) | {next(i for i in range(6) if i not in v)})))
        if len(v) > 1:
            out.append(("missing", v[1:]))
    elif kind == "choices":
        v = list(r)
        if len(v) > 1:
            out.append(("only one", v[:1]))
        letters = [chr(65 + i) for i in range(4)]
        out.append(("all", letters))
    elif kind == "order":
        v = list(r)
        out.append(("reversed", v[::-1]))
    return out


# --------------------------------------------------------------------------------------------- option texts


def _plain_text(text: str) -> str:
    """An option's text as typed in a hurry: lower case, no punctuation, subscripts and operators spelled plainly."""
    t = text.lower().translate(str.maketrans("₀₁₂₃₄₅₆₇₈₉ᵀ−·×", "0123456789t-**"))
    return " ".join("".join(c if c.isalnum() or c in "+-*/=" else " " for c in t).split())


def _typo(text: str, rng: random.Random) -> str:
    """``text`` with two adjacent letters of one longer word swapped."""
    words = text.split(" ")
    long = [i for i, w in enumerate(words) if len(w) >= 6 and w.isalpha()]
    if not long:
        return text
    i = rng.choice(long)
    w = words[i]
    j = rng.randrange(1, len(w) - 2)
    words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words)


def _most(text: str) -> str:
    """The first two thirds of ``text`` (whole words): what a learner copies before moving on."""
    words = text.split()
    return " ".join(words[: max(3, (2 * len(words) + 2) // 3)])


def option_forms(d: dict, o: Oracle, kind: str, rng: random.Random) -> list[tuple[str, Any, str, list[str]]]:
    """(label, answer, "right" | "wrong", mistake names) for an option item, named by the options' texts (as
    shown, typed plainly, with a typo, two thirds of it, pasted with its label), by their numbers, and by
    letters that name no option (which must be asked again, never charged)."""
    texts = [t for t, _ in d["options"]]
    letters = [chr(65 + i) for i in range(len(texts))]
    by_letter = dict(zip(letters, texts))
    valued = all(t[:1].isdigit() for t in texts)  # options that are values: a number is a value
    out: list[tuple[str, Any, str, list[str]]] = []

    def styles(letter: str) -> list[tuple[str, str]]:
        t = by_letter[letter]
        forms = [("text", t), ("plain text", _plain_text(t)), ("pasted", f"{letter}. {t}"),
                 ("pasted paren", f"({letter.lower()}) {t}"), ("i think", f"I think {letter.lower()}"),
                 ("because", f"{letter} because that is how attention works"), ("quoted", str([letter]))]
        if len(t) >= 25:
            forms += [("typo", _typo(t, rng)), ("most of it", _most(t))]
        words = t.rstrip(".").split()
        if len(words) >= 8:  # its clauses the other way round (a long option: a short one reordered is garbled)
            half = len(words) // 2
            forms.append(("words reordered", " ".join(words[half:] + words[:half])))
        if not valued:
            forms.append(("number", str(letters.index(letter) + 1)))
        return forms

    if kind == "choice":
        for letter in letters:
            names = [n for n, v in o.mistakes.items() if v == letter]
            for label, ans in styles(letter):
                out.append((f"{label} of {'the right option' if letter == o.right else names}", ans,
                            "right" if letter == o.right else "wrong", names))
        right_text = by_letter[o.right]
        out.append(("the right option negated", f"It is not true that {right_text[0].lower()}{right_text[1:]}",
                    "wrong", []))
    elif kind == "choices":
        right = list(o.right)
        for sep in ("\n", "; "):
            out.append((f"texts {sep!r}", sep.join(by_letter[c] for c in right[::-1]), "right", []))
            out.append((f"plain texts {sep!r}", sep.join(_plain_text(by_letter[c]) for c in right), "right", []))
        if not valued:
            out.append(("numbers", ", ".join(str(letters.index(c) + 1) for c in right), "right", []))
        out += [("quoted list", str(right), "right", []), ("set text", "{" + ", ".join(right[::-1]) + "}", "right", []),
                ("the answer is", "The answer is " + " & ".join(right), "right", [])]
        for name, wrong in o.mistakes.items():
            if wrong and sorted(wrong) != sorted(right):
                out.append((f"texts of {name}", "\n".join(by_letter[c] for c in wrong), "wrong", [name]))
    else:  # order
        for answer in [o.right] + list(o.also_right):
            out.append(("texts in order", "\n".join(by_letter[c] for c in answer), "right", []))
            out.append(("numbers in order", " ".join(str(letters.index(c) + 1) for c in answer), "right", []))
        for name, wrong in o.mistakes.items():
            out.append((f"texts of {name}", "\n".join(by_letter[c] for c in wrong), "wrong", [name]))
    return out


def no_such_option(d: dict, kind: str) -> list[str]:
    """Letters and numbers that name no option shown: each must be asked again ("there is no option F")."""
    n = len(d["options"])
    beyond = chr(65 + n)
    out = [beyond, f"({beyond.lower()})"] if kind == "choice" else [f"A, {beyond}", f"{beyond} A B"]
    if not all(t[:1].isdigit() for t, _ in d["options"]):
        out.append(str(n + 1) if kind == "choice" else f"1 {n + 1}")
    return out


# --------------------------------------------------------------------------------------------- probing


@dataclass
class Finding:
    skill: str
    seed: int
    klass: str  # right_refused | wrong_accepted | misnamed | shape_message | mistake_is_right
    label: str
    answer: Any
    message: str

    def __str__(self) -> str:
        return f"{self.klass:15s} {self.skill:22s} seed={self.seed} {self.label}: {self.answer!r} -> {self.message}"


@dataclass
class Report:
    counts: Counter = field(default_factory=Counter)  # answers put, per class: right, wrong, mistake
    findings: list[Finding] = field(default_factory=list)

    def count(self, klass: str) -> int:
        """How many findings of class ``klass``."""
        return sum(f.klass == klass for f in self.findings)

    def summary(self) -> str:
        """One line: each class of finding out of the answers it applies to."""
        return (f"right refused {self.count('right_refused')} / {self.counts['right']}, wrong accepted "
                f"{self.count('wrong_accepted')} / {self.counts['wrong'] + self.counts['mistake']}, misnamed "
                f"{self.count('misnamed')} / {self.counts['mistake']}, shape messages "
                f"{self.count('shape_message')}, mistakes that give the right answer {self.count('mistake_is_right')}"
                f" ({sum(self.counts.values())} answers)")


def _same(a, b, kind, decimals) -> bool:
    """Whether two answers are the same typed answer (numbers typed to ``decimals``)."""
    if kind in ("choice", "choices", "order"):
        return (sorted(a) if kind == "choices" else list(a)) == (sorted(b) if kind == "choices" else list(b))
    aa, bb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if aa.shape != bb.shape:
        return False
    if decimals is not None:
        aa, bb = np.round(aa, decimals), np.round(bb, decimals)
    with np.errstate(invalid="ignore"):
        return bool(np.all((np.abs(aa - bb) < 1e-9) | (aa == bb)))


def _near(a, b, kind, decimals) -> bool:
    """Close enough that naming the mistake of ``b`` for the answer ``a`` is fair (rounded working apart)."""
    if decimals is None:
        return _same(a, b, kind, decimals)
    aa, bb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if aa.shape != bb.shape:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all((np.abs(aa - bb) <= 0.06 * np.maximum(1.0, np.abs(bb))) | (aa == bb)))


def _typed_answer(value, kind, decimals):
    if kind in ("choice", "choices", "order"):
        return value if kind != "choices" else ", ".join(value)
    if kind in ("int", "shape", "int_list", "int_set"):
        if kind == "int":
            return str(int(value))
        return str(tuple(int(v) for v in value)) if kind == "shape" else str([int(v) for v in value])
    if kind == "mask":
        return np.asarray(value, bool).astype(int).tolist()
    if kind == "number":
        return _num(float(value), decimals)
    a = typed(value, decimals)
    return _text_forms(a, decimals)[0]


def _names(key) -> tuple[str, ...]:
    names = (key,) if isinstance(key, str) else tuple(key)
    return tuple(n.split("#")[0] for n in names)


def probe(seeds_per_skill: int = 8, skills=None, learner: str = "probe", samples: int = 40) -> Report:
    """Put the learners' answers to every skill (or ``skills``: names or Skill objects) on ``seeds_per_skill``
    problems each (the problems learners ``learner-0``, ``learner-1``, ... get first)."""
    from attnlab.practice import all_skills, get_skill, seed_for

    report = Report()
    chosen = [get_skill(s) if isinstance(s, str) else s for s in skills] if skills else all_skills()
    for skill in chosen:
        make = ORACLES[skill.name]
        for i in range(seeds_per_skill):
            seed = seed_for(f"{learner}-{i}", skill.name, 0)
            v = _variant_of(skill, seed)
            o = make(v.data)
            rng = random.Random(seed)
            kind, dec = skill.kind, skill.decimals

            put = _Put(report, skill, v, seed, o)

            # right answers
            for label, ans in right_forms(o, kind, dec):
                put(None, label, ans, expect="right")
            lo = hi = None
            if o.working is not None and dec is not None:
                works = _rounded_workings(o, dec, rng, samples)
                stack = np.stack(works)
                lo, hi = stack.min(0), stack.max(0)
                for j, w in enumerate({tuple(np.ravel(w)): w for w in works}.values()):
                    put(None, f"rounded working {j}", w.tolist() if w.ndim else float(w), expect="right")
                if kind == "number":
                    lo, hi = float(lo), float(hi)
                coarse = np.round(np.asarray(o.right, float), dec - 1)
                if not np.allclose(coarse, np.round(np.asarray(o.right, float), dec)):
                    put(None, "fewer decimals", coarse.tolist() if coarse.ndim else float(coarse), expect="right")
            # mistakes
            groups: list[tuple[list[str], Any]] = []
            for key, value in o.mistakes.items():
                if value is None:
                    continue
                for names, gv in groups:
                    if _same(gv, value, kind, dec):
                        names.extend(n for n in _names(key) if n not in names)
                        break
                else:
                    groups.append((list(_names(key)), value))
            for names, value in groups:
                others = [_parsed(a, kind) if isinstance(a, str) else a for a in o.also_right]
                if _same(value, o.right, kind, dec) or any(_same(value, a, kind, dec) for a in others):
                    report.findings.append(Finding(skill.name, seed, "mistake_is_right", "+".join(names),
                                                   _typed_answer(value, kind, dec), "gives the right answer"))
                    continue
                if lo is not None:  # a mistake whose typed answer a rounded right working reaches: not told apart
                    t = np.round(np.asarray(value, float), dec)
                    if np.shape(t) == np.shape(lo) and np.all((t >= np.asarray(lo) - 1e-9) & (t <= np.asarray(hi) + 1e-9)):
                        report.findings.append(Finding(skill.name, seed, "mistake_is_right", "+".join(names),
                                                       _typed_answer(value, kind, dec), "within the right answer's reach"))
                        continue
                put("mistake", "+".join(names), _typed_answer(value, kind, dec), expect="wrong", names=names,
                    mistake_value=value)
            if kind in ("choice", "choices", "order"):  # options named by their texts and numbers
                for label, ans, expect, names in option_forms(v.data, o, kind, rng):
                    given = _parsed(ans, kind) if expect == "wrong" else None
                    put("mistake" if names else "wrong", label, ans, expect=expect, names=names,
                        mistake_value=o.mistakes.get(names[0]) if names else given)
                for ans in no_such_option(v.data, kind):
                    report.counts["wrong"] += 1
                    fb = skill.check(v, ans)
                    if fb.correct or fb.readable or "no option" not in fb.message:
                        report.findings.append(Finding(skill.name, seed, "wrong_accepted" if fb.correct else
                                                       "not_asked_again", "no such option", ans, fb.message))
            # typos
            for label, ans in typos(o, kind, dec, lo, hi):
                if any(_same(ans_parsed, m, kind, dec) for m in o.mistakes.values() if m is not None
                       for ans_parsed in [_parsed(ans, kind)] if ans_parsed is not None):
                    continue  # the typo is a named mistake's answer: judged above
                if _parsed(ans, kind) is not None and _same(_parsed(ans, kind), o.right, kind, dec):
                    continue
                fb = put("wrong", label, ans, expect="wrong")
                if kind in ("mask", "matrix", "vector") and np.shape(_parsed(ans, kind)) != np.shape(
                        np.asarray(o.right)) and not fb.correct and not fb.misconceptions:
                    _check_shape_message(report, skill.name, seed, label, ans, fb.message,
                                         np.shape(_parsed(ans, kind)), np.shape(np.asarray(o.right)))
            # shape messages: an S × S mask where L × S is asked, an L × L one, a transposed one
            if skill.name in ("causal_mask_build", "rect_causal_mask") and v.data["S"] > v.data["L"]:
                L, S = v.data["L"], v.data["S"]
                for label, shape in (("S × S square", (S, S)), ("L × L square", (L, L)), ("transposed", (S, L))):
                    ans = np.tril(np.ones(shape, int)).tolist()
                    fb = put("wrong", label, ans, expect="wrong")
                    if not fb.misconceptions:
                        _check_shape_message(report, skill.name, seed, label, ans, fb.message, shape, (L, S))
    return report


@dataclass
class _Put:
    """Puts answers to one problem and records what a tutor would not sign."""

    report: Report
    skill: Any
    v: Any
    seed: int
    o: Oracle

    def __call__(self, klass_if_wrong, label, answer, *, expect, names=(), mistake_value=None):
        skill, o, kind, dec = self.skill, self.o, self.skill.kind, self.skill.decimals
        fb = skill.check(self.v, answer)

        def find(klass, text):
            self.report.findings.append(Finding(skill.name, self.seed, klass, text, answer, fb.message))

        if expect == "right":
            self.report.counts["right"] += 1
            asked_again = not fb.readable and (  # "write it as asked" is fair, if it says what to write
                (label == "fewer decimals" and f"{dec} decimals" in fb.message)
                or (label == "flat" and "row by row" in fb.message))
            coarse_mistake = label == "fewer decimals" and any(
                _same(answer, m, kind, dec - 1) for m in o.mistakes.values() if m is not None)
            if not fb.correct and not asked_again and not coarse_mistake:
                find("right_refused", label)
            return fb
        self.report.counts[klass_if_wrong] += 1
        if fb.correct:
            find("wrong_accepted", label)
            return fb
        missing = [n for n in names if n not in fb.misconceptions]
        if missing:
            find("misnamed", f"{label} (missing {missing}; named {list(fb.misconceptions)})")
        # a name given must fit the answer: that mistake's own answer, by the oracle, close to what was typed
        given = mistake_value if mistake_value is not None else _parsed(answer, kind)
        for n in fb.misconceptions:
            fits = [val for key, val in o.mistakes.items() if n in _names(key) and val is not None]
            if fits and given is not None and not any(_near(given, f, kind, dec) for f in fits):
                find("misnamed", f"{label} (named {n}, whose answer is another)")
        return fb


def _variant_of(skill, seed):
    """The problem ``seed`` of ``skill`` (drawn by the registered skill of that name, so that a changed copy of a
    skill is put the same problems)."""
    from attnlab.practice import get_skill

    return get_skill(skill.name).variant(seed)


def _parsed(ans, kind):
    from attnlab.practice.answers import AnswerFormatError, parse

    if kind in ("choice", "choices", "order"):
        try:
            return parse(ans, kind)
        except AnswerFormatError:
            return None
    try:
        return np.asarray(parse(ans, kind), dtype=float)
    except (AnswerFormatError, ValueError, TypeError):
        return None


def _check_shape_message(report, skill, seed, label, ans, message, given, expected):
    """A shape message must say which way each axis is off (more/fewer rows or columns), or that the axes are
    swapped when they are; never 'swapped' when they are not."""
    swapped = sorted(given) == sorted(expected) and given != expected
    ok = ("swapped" in message) if swapped else ("swapped" not in message and "which axis" not in message)
    if ok and not swapped and len(given) == len(expected):
        for g, e in zip(given, expected):
            if g != e:
                word = "more" if e > g else "fewer"
                ok = ok and f"{word} " in message and f"{e}, not {g}" in message
    if not ok:
        report.findings.append(Finding(skill, seed, "shape_message", label, ans, message))


if __name__ == "__main__":  # pragma: no cover - a report for people
    import sys

    rep = probe(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
    for f in rep.findings:
        print(f)
    print(rep.summary())
    print(Counter((f.klass, f.skill) for f in rep.findings).most_common())
