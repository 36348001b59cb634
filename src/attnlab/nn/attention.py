"""Scaled dot-product attention, written out step by step.

``Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V`` -- Vaswani et al. 2017, "Attention Is All
You Need", §3.2.1, Eq. 1. Each query row produces a probability distribution over the keys
(the attention weights) and returns the matching weighted average of the value rows.

The √d_k scaling keeps the logits' variance near 1 when q and k have unit-variance entries,
so the softmax does not saturate as d_k grows (§3.2.1, footnote 4).

This explicit version returns the weights so they can be inspected and plotted. The fast
fused kernel, ``torch.nn.functional.scaled_dot_product_attention``, computes the same output
(tests check this) but never materialises the weights.
"""

from __future__ import annotations

import math

import torch.nn.functional as F
from torch import Tensor

from ._checks import check_bool_mask, check_mask_shape, check_min_rank, check_no_empty_rows, shape_str


def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
) -> tuple[Tensor, Tensor]:
    """softmax(Q Kᵀ / √d_k + M) V, returning the output and the attention weights.

    Vaswani et al. 2017, §3.2.1, Eq. 1; the mask M is 0 where allowed and -inf where not
    (§3.2.3), applied to the logits *before* the softmax, so masked weights are exactly 0.

    Args:
        q: ``(..., L, d_k)`` queries, float.
        k: ``(..., S, d_k)`` keys, same dtype; leading axes broadcast with ``q``'s.
        v: ``(..., S, d_v)`` values, same dtype.
        mask: optional bool tensor broadcastable to ``(..., L, S)``; True = may attend.
        dropout_p: probability of zeroing an attention weight (as in ``torch``'s MHA, the
            kept weights are rescaled by 1 / (1 - p)). Pass 0.0 in evaluation; this function
            has no train/eval state.

    Returns:
        ``out``: ``(..., L, d_v)``; ``weights``: ``(..., L, S)``, the softmax probabilities
        (before dropout), each row sums to 1 and masked entries are exactly 0.

    Raises:
        ValueError: if a tensor has fewer than 2 dimensions, ``q``/``k`` feature sizes
            differ, ``k``/``v`` lengths differ, the mask does not broadcast to
            ``(..., L, S)``, or some query row may attend to no key (its softmax is
            undefined); ``dropout_p`` outside [0, 1).
        TypeError: if ``mask`` is not a bool tensor, or q, k, v are not all of one float dtype.

    Example (two tokens, small enough to check by hand)::

        q = torch.tensor([[1., 0.], [0., 1.]]); k = torch.tensor([[1., 0.], [1., 1.]])
        v = torch.tensor([[1., 2.], [3., 4.]])
        out, w = scaled_dot_product_attention(q, k, v)   # out ≈ [[2.00, 3.00], [2.34, 3.34]]
    """
    check_min_rank(q, "q", 2, "(..., L, d_k)")
    check_min_rank(k, "k", 2, "(..., S, d_k)")
    check_min_rank(v, "v", 2, "(..., S, d_v)")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share the feature size d_k to be compared by dot product: "
            f"q {shape_str(q)} has d_k={q.shape[-1]}, k {shape_str(k)} has d_k={k.shape[-1]}."
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same length S (one value per key): k {shape_str(k)} has "
            f"S={k.shape[-2]}, v {shape_str(v)} has S={v.shape[-2]}."
        )
    if not (q.dtype == k.dtype == v.dtype and q.dtype.is_floating_point):
        raise TypeError(
            f"q, k, v must share one floating dtype, got {q.dtype}, {k.dtype}, {v.dtype}; "
            f"convert them with .float() (or .to(q.dtype))."
        )
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}.")
    d_k = q.shape[-1]

    scores = (q @ k.transpose(-2, -1)) / math.sqrt(d_k)  # (..., L, d_k) @ (..., d_k, S) -> (..., L, S)
    if mask is not None:
        check_bool_mask(mask, "mask")
        check_mask_shape(mask, "mask", tuple(scores.shape), "(..., L, S)")
        check_no_empty_rows(mask, "mask")
        scores = scores.masked_fill(~mask, float("-inf"))  # forbidden logits -> -inf
    weights = scores.softmax(dim=-1)  # (..., L, S), each row sums to 1
    dropped = F.dropout(weights, p=dropout_p) if dropout_p > 0 else weights
    out = dropped @ v  # (..., L, S) @ (..., S, d_v) -> (..., L, d_v)
    return out, weights
