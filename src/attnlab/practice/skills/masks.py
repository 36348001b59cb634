"""Lesson 03: causal, padding and combined masks (bool, True = may attend), masked softmax."""
from __future__ import annotations

import torch

from ._common import Skill, f64, ints, register, show, softmax_rows

_MASK_FORMS = "Write True/False or 1/0 (1 = may attend), one row per query, e.g. [[1, 0], [1, 1]]."


def _causal_build(rng):
    L = rng.randint(3, 5)
    S = L + (rng.choice([2, 3]) if rng.random() < 0.35 else 0)  # S = L + 1 would make two mistakes look alike
    extra = (f" The keys include {S - L} cached earlier position(s): S = {S} keys, and the {L} queries are the "
             "**last** L positions.") if S > L else ""
    prompt = f"Build the **causal mask** for L = {L} queries and S = {S} keys.{extra} {_MASK_FORMS}"
    return prompt, {"L": L, "S": S}


def _causal(d):
    from attnlab.nn import causal_mask

    return causal_mask(d["L"], d["S"])  # (L, S)


register(Skill(
    name="causal_mask_build", lesson="03", title="Build a causal mask", kind="mask",
    build=_causal_build, solve=_causal,
    mistakes={
        "inverted_mask": lambda d: ~_causal(d),
        "causal_excludes_diagonal": lambda d: torch.ones(d["L"], d["S"], dtype=torch.bool).tril(d["S"] - d["L"] - 1),
        "causal_kv_misaligned": lambda d: torch.ones(d["L"], d["S"], dtype=torch.bool).tril(0) if d["S"] > d["L"] else None,
    },
    hints=("A query may look at itself and at everything before it, never after.",
           "Entry (i, j) is True iff j <= i + (S − L); with S = L that is the lower triangle including the diagonal."),
))


def _padding_build(rng):
    S = rng.randint(4, 5)
    lengths = [rng.randint(1, S) for _ in range(3)]
    if max(lengths) == min(lengths):
        lengths[0] = S if lengths[0] < S else 1
    prompt = (f"A batch of 3 sequences padded to S = {S} tokens has real lengths {show(lengths)} (padding at the "
              f"end). Build the **padding mask** of shape (3, {S}), True = real token that may be attended. "
              + _MASK_FORMS.replace("one row per query", "one row per sequence"))
    return prompt, {"lengths": lengths, "S": S}


def _padding(d):
    from attnlab.nn import padding_mask

    return padding_mask(d["lengths"], d["S"])  # (B, S)


register(Skill(
    name="padding_mask_build", lesson="03", title="Build a padding mask", kind="mask",
    build=_padding_build, solve=_padding,
    mistakes={"inverted_mask": lambda d: ~_padding(d)},
    hints=("Padding tokens are fillers: nobody should attend to them.",
           "Row b is True for positions 0 .. length_b − 1 and False after that."),
))


def _combined_build(rng):
    L = rng.randint(3, 5)
    length = rng.randint(2, L - 1)
    prompt = (f"Decoder self-attention over L = {L} positions of one sequence whose last {L - length} position(s) "
              f"are padding (real length {length}). Build the **combined mask** (L × L): causal AND key padding. "
              + _MASK_FORMS)
    return prompt, {"L": L, "length": length}


def _pad_row(d):
    from attnlab.nn import padding_mask

    return padding_mask([d["length"]], d["L"])[:, None, :][0]  # (1, S): broadcasts over query rows


def _combined(d):
    from attnlab.nn import causal_mask, combine_masks

    return combine_masks(causal_mask(d["L"]), _pad_row(d))  # (L, L)


register(Skill(
    name="combine_masks_build", lesson="03", title="Combine causal and padding masks", kind="mask",
    build=_combined_build, solve=_combined,
    mistakes={
        "combine_with_or": lambda d: _causal({"L": d["L"], "S": d["L"]}) | _pad_row(d),
        "inverted_mask": lambda d: ~_combined(d),
        "missing_causal_mask": lambda d: _pad_row(d).expand(d["L"], d["L"]),
    },
    hints=("A key is allowed only if both masks allow it.",
           "Start from the lower triangle (causal), then set every column j >= real length to False."),
))


def _masked_build(rng):
    L = rng.choice([2, 3])
    while True:
        scores = ints(rng, L, L, -1, 2)
        if all(len(set(r[: i + 1])) > 1 for i, r in enumerate(scores) if i > 0) and any(
                scores[i][j] != 0 for i in range(L) for j in range(i + 1, L)):
            break
    prompt = (f"Scaled scores (one row per query, L = S = {L}): {show(scores)}. Apply the **causal mask** and "
              "compute the **attention weights** to **2 decimals**.")
    return prompt, {"scores": scores}


def _masked(d):
    from attnlab.nn import causal_mask

    return softmax_rows(d["scores"], causal_mask(len(d["scores"])))


register(Skill(
    name="masked_softmax", lesson="03", title="Softmax with a causal mask", kind="matrix", decimals=2,
    build=_masked_build, solve=_masked, tables=("scores",),
    mistakes={
        "mask_after_softmax": lambda d: softmax_rows(d["scores"]) * torch.ones(len(d["scores"]), len(d["scores"])).tril(),
        "missing_causal_mask": lambda d: softmax_rows(d["scores"]),
    },
    hints=("Blocked positions must get weight exactly 0 and each row must still sum to 1.",
           "Replace blocked scores (j > i) by −inf, then take the softmax of each row over what is left."),
))
