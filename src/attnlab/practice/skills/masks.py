"""Lesson 03: causal (square and rectangular), padding and combined masks (bool, True = may attend), masked softmax."""
from __future__ import annotations

import math

import torch

from ._common import Either, Skill, f64, ints, register, show, softmax_rows

_MASK_FORMS = "Write True/False or 1/0 (1 = may attend), one row per query, e.g. [[1, 0], [1, 1]]."


def _grid(rows: int, cols: int, allowed) -> list[list[bool]]:
    """A rows × cols boolean mask with entry (i, j) = allowed(i, j)."""
    return [[bool(allowed(i, j)) for j in range(cols)] for i in range(rows)]


# -------------------------------------------------------------------- causal


def _causal_problems() -> list[tuple[int, int, str, int, int]]:
    """Every (L, S, padding side, padding length, window) of a by-hand causal mask of at most 6 × 6: L queries
    (the last L of S positions); key padding of k positions at the end (only while some query is real) or
    at the start (left padding, as in batched generation), or none; and a local-attention window w (a query
    sees itself and the w − 1 positions before it) or none (w = 0)."""
    out = []
    for S in range(2, 7):
        for L in range(1, S + 1):
            pads = [("none", 0)] + [("end", k) for k in range(1, L)] + [("start", k) for k in range(1, S)]
            out += [(L, S, side, k, w) for side, k in pads for w in [0, *range(2, S)]]
    return out


_CAUSAL_PROBLEMS = _causal_problems()


def _causal_build(rng):
    local = rng.random() < 0.5  # half the problems with a window, half without; uniform within each half
    L, S, side, pad, window = rng.choice([p for p in _CAUSAL_PROBLEMS if bool(p[4]) == local])
    data = {"L": L, "S": S, "side": side, "pad": pad, "window": window}
    extra = (f" The keys include {S - L} cached earlier position(s): S = {S} keys, and the {L} queries are the "
             "**last** L positions.") if S > L else ""
    if side == "none":
        padding = " No position is padding."
    else:
        where = "last" if side == "end" else "first"
        padding = (f" The sequence is padded at the {side}: its **{where} {pad} position(s)** are padding, and no "
                   "query may attend to a padding key (a row may end up all 0).")
    windowed = (f" The attention is **local with a window of {window}**: a query sees itself and at most the "
                f"{window - 1} position(s) just before it.") if window else ""
    prompt = f"Build the **causal mask** for L = {L} queries and S = {S} keys.{extra}{padding}{windowed} {_MASK_FORMS}"
    return prompt, data


def _real(d, j) -> bool:
    """Key j is a real token (not padding); problems without padding (``side`` absent) have none."""
    pad = d.get("pad", 0)
    return j >= pad if d.get("side") == "start" else j < d["S"] - pad


def _near(d, i, j) -> bool:
    """Key j lies inside query i's local window (``window`` 0 or absent: no window)."""
    w = d.get("window", 0)
    return not w or j > i + d["S"] - d["L"] - w


def _causal(d):
    """Query i (absolute position i + S − L) may see keys j <= i + S − L that are not padding (and, with a
    window w, j > i + S − L − w)."""
    return _grid(d["L"], d["S"], lambda i, j: j <= i + d["S"] - d["L"] and _real(d, j) and _near(d, i, j))


def _causal_reference(d):
    from attnlab.nn import causal_mask, combine_masks, padding_mask

    causal = causal_mask(d["L"], d["S"])  # (L, S)
    if d.get("window"):  # keys more than window − 1 positions back are blocked too
        far = torch.ones(d["L"], d["S"], dtype=torch.bool).tril(d["S"] - d["L"] - d["window"])  # (L, S)
        causal = causal & ~far
    if not d.get("pad"):
        return causal
    real = padding_mask([d["S"] - d["pad"]], d["S"])[0]  # (S,): padding at the end
    if d["side"] == "start":
        real = real.flip(0)  # padding at the start
    return combine_masks(causal, real.expand(d["L"], d["S"]))  # (L, S)


_CAUSAL_MISTAKES = {  # shared by the square and the rectangular causal-mask skills
    "inverted_mask": lambda d: [[not v for v in row] for row in _causal(d)],
    "causal_excludes_diagonal": lambda d: _grid(d["L"], d["S"], lambda i, j: j < i + d["S"] - d["L"] and _real(d, j)
                                                and _near(d, i, j)),
    # torch.ones(L, S).tril(): the triangle anchored at the top-left corner, as if the queries came first
    "causal_kv_misaligned": lambda d: _grid(d["L"], d["S"], lambda i, j: j <= i and _real(d, j)
                                            and _near(d, i + d["L"] - d["S"], j)) if d["S"] > d["L"] else None,
    "causal_upper_triangle": lambda d: _grid(d["L"], d["S"], lambda i, j: j >= i + d["S"] - d["L"] and _real(d, j)),
}
_PADDED_CAUSAL_MISTAKES = {
    "missing_padding_mask": lambda d: _grid(d["L"], d["S"], lambda i, j: j <= i + d["S"] - d["L"] and _near(d, i, j))
    if d.get("pad") else None,
    "rect_mask_square": lambda d: _grid(d["S"], d["S"], lambda i, j: j <= i and _real(d, j)) if d["S"] > d["L"] else None,
}

register(Skill(
    name="causal_mask_build", lesson="03", title="Build a causal mask", kind="mask",
    build=_causal_build, solve=_causal, reference=_causal_reference,
    kinds=("S = L", "S > L (cached keys)"),
    kind_of_data=lambda d: "S = L" if d["S"] == d["L"] else "S > L (cached keys)",
    mistakes={**_CAUSAL_MISTAKES, **_PADDED_CAUSAL_MISTAKES},
    hints=("A query may look at itself and at everything before it, never after, and never at a padding key.",
           "Entry (i, j) is True iff j <= i + (S − L) and key j is not padding; with S = L and no padding that is "
           "the lower triangle including the diagonal."),
))

# -------------------------------------------------------------------- rectangular causal (S > L)


def _rect_build(rng):
    prefill = rng.random() < 0.4  # a prompt run in chunks (L > 1), else generation (often one token, L = 1)
    L = rng.randint(2, 5) if prefill or rng.random() < 0.5 else 1
    P = rng.randint(2, 13) if L == 1 else rng.randint(2, 9)  # positions whose keys and values are already cached
    S = P + L
    first = f"positions 0..{P - 1}"
    if not prefill:
        setting = f"Generation with a KV cache: the cache holds the keys and values of {first}, and "
    else:
        setting = (f"Chunked prefill: a long prompt is run through the model in chunks; the keys and values of {first} "
                   "are cached from the earlier chunks, and in this chunk ")
    if L == 1:
        step = (f"one new token (position {P}) is run. Its key is appended, so the **L = 1 query** (the newest "
                f"position) attends over **S = {S} keys** (positions 0..{S - 1})")
    else:
        step = (f"L = {L} new tokens (positions {P}..{S - 1}) are run in one step. Their keys are appended, so the "
                f"**L = {L} queries** (the newest positions) attend over **S = {S} keys** (positions 0..{S - 1})")
    single = " (one query: a single row, written [[...]])" if L == 1 else ""
    prompt = setting + step + f". Build the **(L × S) = ({L} × {S}) causal mask**{single}. " + _MASK_FORMS
    return prompt, {"L": L, "S": S}


register(Skill(
    name="rect_causal_mask", lesson="03", title="The rectangular causal mask (fewer queries than keys)", kind="mask",
    build=_rect_build, solve=_causal, reference=_causal_reference,
    kinds=("one new token (L = 1)", "several new tokens (L > 1)"),
    kind_of_data=lambda d: "one new token (L = 1)" if d["L"] == 1 else "several new tokens (L > 1)",
    mistakes={
        **_CAUSAL_MISTAKES,
        "rect_mask_square": lambda d: _grid(d["S"], d["S"], lambda i, j: j <= i),
    },
    hints=("The queries are the newest positions: line them up with the last L keys, not the first L.",
           "Query i sits at position i + (S − L): entry (i, j) is True iff j <= i + (S − L). These are the bottom "
           "L rows of the square S × S causal mask; one new token (L = 1) sees every key."),
))

# -------------------------------------------------------------------- padding


def _padding_build(rng):
    S = rng.randint(4, 6)
    lengths = [rng.randint(1, S) for _ in range(3)]
    if max(lengths) == min(lengths):
        lengths[0] = S if lengths[0] < S else 1
    prompt = (f"A batch of 3 sequences padded to S = {S} tokens has real lengths {show(lengths)} (padding at the "
              f"end). Build the **padding mask** of shape (3, {S}), True = real token that may be attended. "
              + _MASK_FORMS.replace("one row per query", "one row per sequence"))
    return prompt, {"lengths": lengths, "S": S}


def _padding(d, shift=0):
    return [[j < n + shift for j in range(d["S"])] for n in d["lengths"]]


def _padding_reference(d):
    from attnlab.nn import padding_mask

    return padding_mask(d["lengths"], d["S"])  # (B, S)


register(Skill(
    name="padding_mask_build", lesson="03", title="Build a padding mask", kind="mask",
    build=_padding_build, solve=_padding, reference=_padding_reference,
    mistakes={
        "inverted_mask": lambda d: [[not v for v in row] for row in _padding(d)],
        "padding_at_start": lambda d: [[j >= d["S"] - n for j in range(d["S"])] for n in d["lengths"]],
        "length_off_by_one": lambda d: _padding(d, 1) if min(d["lengths"]) < d["S"] else None,
        "padding_width_from_lengths": lambda d: ([[j < n for j in range(max(d["lengths"]))] for n in d["lengths"]]
                                                 if max(d["lengths"]) < d["S"] else None),
    },
    hints=("Padding tokens are fillers: nobody should attend to them.",
           "Row b is True for positions 0 .. length_b − 1 and False after that."),
))

# -------------------------------------------------------------------- causal AND padding


def _combined_build(rng):
    L = rng.randint(3, 12)
    length = rng.randint(2, L - 1) if rng.random() < 0.9 else L  # length 1: leaving out the causal mask changes nothing
    pad = f"whose last {L - length} position(s) are padding (real length {length})" if length < L else \
        "with no padding (real length {L})".format(L=L)
    prompt = (f"Decoder self-attention over L = {L} positions of one sequence {pad}. Build the **combined mask** "
              "(L × L): causal AND key padding. " + _MASK_FORMS)
    return prompt, {"L": L, "length": length}


def _combined(d, combine=lambda c, p: c and p, causal=lambda i, j: j <= i, pad=None):
    pad = pad or (lambda i, j: j < d["length"])
    return _grid(d["L"], d["L"], lambda i, j: combine(causal(i, j), pad(i, j)))


def _combined_reference(d):
    from attnlab.nn import causal_mask, combine_masks, padding_mask

    return combine_masks(causal_mask(d["L"]), padding_mask([d["length"]], d["L"])[:, None, :][0])  # (L, L)


register(Skill(
    name="combine_masks_build", lesson="03", title="Combine causal and padding masks", kind="mask",
    build=_combined_build, solve=_combined, reference=_combined_reference,
    mistakes={
        "combine_with_or": lambda d: _combined(d, combine=lambda c, p: c or p),
        "inverted_mask": lambda d: _combined(d, combine=lambda c, p: not (c and p)),
        "missing_causal_mask": lambda d: _combined(d, causal=lambda i, j: True),
        "missing_padding_mask": lambda d: _combined(d, pad=lambda i, j: True),
        "mask_padded_queries": lambda d: _combined(d, pad=lambda i, j: i < d["length"]),
        "causal_excludes_diagonal": lambda d: _combined(d, causal=lambda i, j: j < i),
        "causal_upper_triangle": lambda d: _combined(d, causal=lambda i, j: j >= i),
    },
    hints=("A key is allowed only if both masks allow it.",
           "Start from the lower triangle (causal), then set every column j >= real length to False."),
))

# -------------------------------------------------------------------- masked softmax


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


def _masked_working(d, m, keep=lambda i, j: j <= i, shift=False):
    """Each row's softmax over the keys the causal mask keeps (``shift``: as exp(s − max s), the same weights)."""
    soft = m.softmax_shifted if shift else m.softmax
    return [soft(row, [keep(i, j) for j in range(len(row))]) for i, row in enumerate(d["scores"])]


def _masked_reference(d):
    from attnlab.nn import causal_mask

    return softmax_rows(d["scores"], causal_mask(len(d["scores"])))


def _without_diagonal(d):
    """Each row's softmax over the keys j < i only (the diagonal excluded); row 0 then has no key left, which a
    learner writes as zeros or keeps on its own key: either row 0."""
    L = len(d["scores"])
    rows = []
    for i, row in enumerate(d["scores"][1:], start=1):
        e = [math.exp(v) if j < i else 0.0 for j, v in enumerate(row)]
        rows.append([x / sum(e) for x in e])
    return Either([[[0.0] * L] + rows, [[1.0] + [0.0] * (L - 1)] + rows])


def _kept_rows(d, f, whole=False):
    """Each kept score mapped by ``f`` and divided by its row's sum (``whole``: by the sum over every row); None
    when a sum is 0 (no number to type)."""
    rows = [[f(v) if j <= i else 0.0 for j, v in enumerate(row)] for i, row in enumerate(d["scores"])]
    sums = [sum(sum(r) for r in rows)] * len(rows) if whole else [sum(r) for r in rows]
    return None if any(s == 0 for s in sums) else [[v / s for v in r] for r, s in zip(rows, sums, strict=True)]


def _hard_rows(d):
    """All the weight on each row's largest kept score (None when two kept scores tie for it)."""
    out = []
    for i, row in enumerate(d["scores"]):
        kept = row[: i + 1]
        if kept.count(max(kept)) > 1:
            return None
        out.append([float(j == kept.index(max(kept))) for j in range(len(row))])
    return out


def _fill_zero(d):
    """Blocked scores replaced by 0 (not −inf) before the softmax."""
    return softmax_rows([[v if j <= i else 0 for j, v in enumerate(row)] for i, row in enumerate(d["scores"])])


register(Skill(
    name="masked_softmax", lesson="03", title="Softmax with a causal mask", kind="matrix", decimals=2,
    build=_masked_build, solve=None, working=_masked_working, reference=_masked_reference, tables=("scores",),
    orders=(lambda d, m: _masked_working(d, m, shift=True),),
    mistakes={
        "mask_after_softmax": lambda d: softmax_rows(d["scores"]) * torch.ones(len(d["scores"]), len(d["scores"])).tril(),
        "missing_causal_mask": lambda d: softmax_rows(d["scores"]),
        "mask_fill_zero": _fill_zero,
        "causal_excludes_diagonal": _without_diagonal,
        "normalize_without_exp": lambda d: _kept_rows(d, lambda v: v),
        "softmax_global_sum": lambda d: _kept_rows(d, math.exp, whole=True),
        "argmax_lookup": _hard_rows,
        "causal_upper_triangle": lambda d: softmax_rows(d["scores"], torch.ones(len(d["scores"]), len(d["scores"]),
                                                                                dtype=torch.bool).triu()),
        "softmax_no_normalise": lambda d: [[math.exp(v) if j <= i else 0.0 for j, v in enumerate(row)]
                                           for i, row in enumerate(d["scores"])],
        # each key's column normalised over the queries that may see it (rows i >= j)
        "softmax_wrong_axis": lambda d: softmax_rows(f64(d["scores"]).T.tolist(),
                                                     torch.ones(len(d["scores"]), len(d["scores"]),
                                                                dtype=torch.bool).triu()).T,
    },
    hints=("Blocked positions must get weight exactly 0 and each row must still sum to 1.",
           "Replace blocked scores (j > i) by −inf, then take the softmax of each row over what is left."),
))
