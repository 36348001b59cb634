"""Lesson 07: which mask goes where in an encoder-decoder, and cross-attention shapes."""
from __future__ import annotations

import torch

from ._common import Skill, register

_WHERE = {
    "encoder": "encoder self-attention",
    "decoder": "decoder self-attention",
    "cross": "decoder cross-attention (queries from the decoder, keys/values from the encoder)",
}


def _choose_build(rng):
    setting = rng.choice(list(_WHERE))
    L = rng.randint(3, 4)
    S = L if setting != "cross" else rng.randint(3, 5)
    real = rng.randint(2, (S if setting != "decoder" else L) - 1)
    if setting == "decoder":
        text = f"the target sequence has L = {L} positions, the last {L - real} of them padding"
    elif setting == "encoder":
        text = f"the source sequence has S = {S} positions, the last {S - real} of them padding"
    else:
        text = (f"L = {L} decoder positions (no target padding) attend to S = {S} encoder positions, the last "
                f"{S - real} of them source padding")
    prompt = (f"In **{_WHERE[setting]}**, {text}. Build the full (queries × keys) boolean mask that this attention "
              "must use for this one sequence. Write True/False or 1/0 (1 = may attend), one row per query.")
    return prompt, {"setting": setting, "L": L, "S": S, "real": real}


def _pad(d):
    from attnlab.nn import padding_mask

    return padding_mask([d["real"]], d["S"])[:, None, :][0].expand(d["L"], d["S"])  # (L, S)


def _causal(d):
    """Causal mask aligned as in causal_mask (query i sees keys j <= i + S - L), also for S < L."""
    return torch.ones(d["L"], d["S"], dtype=torch.bool).tril(d["S"] - d["L"])


def _choose(d):
    from attnlab.nn import causal_mask, combine_masks

    if d["setting"] == "decoder":
        return combine_masks(causal_mask(d["L"]), _pad(d))  # causal AND key padding (L == S here)
    return _pad(d)  # encoder self-attention and cross-attention: key padding only


register(Skill(
    name="choose_mask", lesson="07", title="Choose the mask: encoder, decoder, cross-attention", kind="mask",
    build=_choose_build, solve=_choose,
    mistakes={
        "needless_causal_mask": lambda d: _causal(d) & _pad(d) if d["setting"] != "decoder" else None,
        "missing_causal_mask": lambda d: _pad(d) if d["setting"] == "decoder" else None,
        "inverted_mask": lambda d: ~_choose(d),
    },
    hints=("Ask two questions: may this attention see the future? Which side's padding are the keys?",
           "Encoder self-attention: source padding only. Decoder self-attention: causal AND target padding. "
           "Cross-attention: source (key) padding only, no causal mask."),
))


def _cross_build(rng):
    n_heads = rng.choice([2, 4, 8])
    d_model = n_heads * rng.choice([4, 8])
    B = rng.choice([b for b in (1, 2, 3, 4) if b != n_heads])  # all four axes distinct: no ambiguity
    L, S = rng.sample([n for n in (3, 5, 6, 7, 9) if n != B], 2)
    prompt = (f"Cross-attention with d_model = {d_model}, n_heads = {n_heads}: the decoder states have shape "
              f"(B, L, d_model) = ({B}, {L}, {d_model}), the encoder output (B, S, d_model) = ({B}, {S}, {d_model}). "
              "What is the shape of the **attention weights** (need_weights=True)?")
    return prompt, {"B": B, "L": L, "S": S, "d_model": d_model, "n_heads": n_heads}


def _cross(d):
    from attnlab.nn import MultiHeadAttention

    mha = MultiHeadAttention(d["d_model"], d["n_heads"])
    decoder = torch.zeros(d["B"], d["L"], d["d_model"])  # (B, L, d_model) queries
    memory = torch.zeros(d["B"], d["S"], d["d_model"])  # (B, S, d_model) keys and values
    with torch.no_grad():
        _, weights = mha(decoder, memory, memory, need_weights=True)  # (B, H, L, S)
    return tuple(weights.shape)


register(Skill(
    name="cross_attention_shapes", lesson="07", title="Cross-attention weight shape", kind="shape",
    build=_cross_build, solve=_cross,
    mistakes={"cross_shape_swapped": lambda d: (d["B"], d["n_heads"], d["S"], d["L"])},
    hints=("Queries come from the decoder, keys from the encoder; every head has its own weight matrix.",
           "(B, H, number of queries, number of keys) = (B, n_heads, L, S)."),
))
