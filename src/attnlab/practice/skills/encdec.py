"""Lesson 07: which mask goes where in an encoder-decoder, and cross-attention shapes."""
from __future__ import annotations

import torch

from ._common import Skill, register

_WHERE = {
    "encoder": "encoder self-attention",
    "decoder": "decoder self-attention",
    "cross": "decoder cross-attention (queries from the decoder, keys/values from the encoder)",
}


_LONGEST = 7  # at most 7 × 7 entries to write by hand
#: every (L, S, real length, padding side) per setting; drawn uniformly within the setting (cross-attention
#: with L ≠ S: with L = S its mask is the encoder's, and two kinds of problem would share answers)
_CHOOSE_PROBLEMS = {
    setting: [(L, S, real, side) for L in range(2, _LONGEST + 1)
              for S in ([n for n in range(2, _LONGEST + 1) if n != L] if setting == "cross" else (L,))
              for real in range(1, (S if setting != "decoder" else L)) for side in ("end", "start")]
    for setting in _WHERE}


def _choose_build(rng):
    setting = rng.choice(list(_WHERE))
    L, S, real, side = rng.choice(_CHOOSE_PROBLEMS[setting])
    n = "the last" if side == "end" else "the first"
    if setting == "decoder":
        text = f"the target sequence has L = {L} positions, {n} {L - real} of them padding"
    elif setting == "encoder":
        text = f"the source sequence has S = {S} positions, {n} {S - real} of them padding"
    else:
        text = (f"L = {L} decoder positions (no target padding) attend to S = {S} encoder positions, {n} "
                f"{S - real} of them source padding")
    prompt = (f"In **{_WHERE[setting]}**, {text}. Build the full (queries × keys) boolean mask that this attention "
              "must use for this one sequence (a row may end up all 0). Write True/False or 1/0 (1 = may attend), "
              "one row per query.")
    return prompt, {"setting": setting, "L": L, "S": S, "real": real, "side": side}


def _is_real(d, position, length) -> bool:
    """Position ``position`` of a sequence of ``length`` holds a real token: the first ``real`` positions
    (padding at the end, the default) or the last ``real`` (padding at the start)."""
    return position >= length - d["real"] if d.get("side") == "start" else position < d["real"]


def _mask(d, causal=None, keys_padded=True, queries_padded=False):
    """(L, S) mask: key j is real and, if ``causal``, j <= causal(i)."""
    return [[(_is_real(d, j, d["S"]) or not keys_padded) and (_is_real(d, i, d["L"]) or not queries_padded)
             and (causal is None or j <= causal(i)) for j in range(d["S"])] for i in range(d["L"])]


def _choose(d):
    return _mask(d, causal=(lambda i: i) if d["setting"] == "decoder" else None)


def _choose_reference(d):
    from attnlab.nn import causal_mask, combine_masks, padding_mask

    pad = padding_mask([d["real"]], d["S"])[0]  # (S,): padding at the end
    if d.get("side") == "start":
        pad = pad.flip(0)  # padding at the start
    pad = pad.expand(d["L"], d["S"])  # (L, S)
    if d["setting"] == "decoder":
        return combine_masks(causal_mask(d["L"]), pad)  # causal AND key padding (L == S here)
    return pad  # encoder self-attention and cross-attention: key padding only


register(Skill(
    name="choose_mask", lesson="07", title="Choose the mask: encoder, decoder, cross-attention", kind="mask",
    build=_choose_build, solve=_choose, reference=_choose_reference,
    kinds=tuple(_WHERE), kind_of_data=lambda d: d["setting"],
    mistakes={
        # a learner adds torch.tril(ones(L, S)): for S < L its first row would block every key
        "needless_causal_mask": lambda d: _mask(d, causal=lambda i: i) if d["setting"] != "decoder" else None,
        "missing_causal_mask": lambda d: _mask(d) if d["setting"] == "decoder" else None,
        "inverted_mask": lambda d: [[not v for v in row] for row in _choose(d)],
        "mask_padded_queries": lambda d: _mask(d, causal=(lambda i: i) if d["setting"] == "decoder" else None,
                                               keys_padded=False, queries_padded=True)
        if d["setting"] != "cross" else None,
        "missing_padding_mask": lambda d: _mask(d, causal=(lambda i: i) if d["setting"] == "decoder" else None,
                                                keys_padded=False),
        "combine_with_or": lambda d: [[(j <= i) or _is_real(d, j, d["S"]) for j in range(d["S"])] for i in range(d["L"])]
        if d["setting"] == "decoder" else None,
        "causal_excludes_diagonal": lambda d: _mask(d, causal=lambda i: i - 1) if d["setting"] == "decoder" else None,
        "causal_upper_triangle": lambda d: [[j >= i and _is_real(d, j, d["S"]) for j in range(d["S"])]
                                            for i in range(d["L"])]
        if d["setting"] == "decoder" else None,
        # an L × L mask for cross-attention: the key axis given the decoder's length
        "keys_length_from_queries": lambda d: [[_is_real(d, j, d["L"]) for j in range(d["L"])] for i in range(d["L"])]
        if d["setting"] == "cross" and d["S"] != d["L"] else None,
    },
    hints=("Ask two questions: may this attention see the future? Which side's padding are the keys?",
           "Encoder self-attention: source padding only. Decoder self-attention: causal AND target padding. "
           "Cross-attention: source (key) padding only, no causal mask."),
))


def _cross_build(rng):
    n_heads = rng.choice([2, 4, 6, 8])
    d_model = n_heads * rng.choice([4, 8, 16])
    B = rng.choice([b for b in range(1, 9) if b != n_heads])  # all four axes distinct: no ambiguity
    L, S = rng.sample([n for n in range(3, 17) if n not in (B, n_heads, d_model // n_heads)], 2)
    prompt = (f"Cross-attention with d_model = {d_model}, n_heads = {n_heads}: the decoder states have shape "
              f"(B, L, d_model) = ({B}, {L}, {d_model}), the encoder output (B, S, d_model) = ({B}, {S}, {d_model}). "
              "What is the shape of the **attention weights** (need_weights=True)?")
    return prompt, {"B": B, "L": L, "S": S, "d_model": d_model, "n_heads": n_heads}


def _cross_reference(d):
    from attnlab.nn import MultiHeadAttention

    mha = MultiHeadAttention(d["d_model"], d["n_heads"])
    decoder = torch.zeros(d["B"], d["L"], d["d_model"])  # (B, L, d_model) queries
    memory = torch.zeros(d["B"], d["S"], d["d_model"])  # (B, S, d_model) keys and values
    with torch.no_grad():
        _, weights = mha(decoder, memory, memory, need_weights=True)  # (B, H, L, S)
    return tuple(weights.shape)


register(Skill(
    name="cross_attention_shapes", lesson="07", title="Cross-attention weight shape", kind="shape",
    build=_cross_build, reference=_cross_reference, solve=lambda d: (d["B"], d["n_heads"], d["L"], d["S"]),
    mistakes={
        "cross_shape_swapped": lambda d: (d["B"], d["n_heads"], d["S"], d["L"]),
        "scores_without_head_axis": lambda d: (d["B"], d["L"], d["S"]),
        "keys_length_from_queries": lambda d: (d["B"], d["n_heads"], d["L"], d["L"]),
        "scores_as_output": lambda d: (d["B"], d["n_heads"], d["L"], d["d_model"] // d["n_heads"]),
    },
    hints=("Queries come from the decoder, keys from the encoder; every head has its own weight matrix.",
           "(B, H, number of queries, number of keys) = (B, n_heads, L, S)."),
))
