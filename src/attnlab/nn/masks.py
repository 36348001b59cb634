"""Attention masks: boolean, **True = may attend**.

This is the rule of ``torch.nn.functional.scaled_dot_product_attention``. A mask enters
attention as an additive term on the logits (0 where allowed, -inf where not), i.e.
``softmax(Q Kᵀ / √d_k + M)`` (Vaswani et al. 2017, §3.2.3 "Applications of Attention": the
decoder masks out illegal connections by setting them to -inf before the softmax).

Two masks cover nearly every case:

* the causal mask ``(L, S)``: query i may attend key j iff ``j <= i + (S - L)``;
* the padding mask ``(B, S)``: True for real tokens, False for padding.

Callers add broadcast axes explicitly (``pad[:, None, :]`` for ``(B, L, S)`` scores,
``pad[:, None, None, :]`` for ``(B, H, L, S)``) and combine with :func:`combine_masks`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._checks import check_bool_mask, check_rank, shape_str


def causal_mask(L: int, S: int | None = None, device: torch.device | str | None = None) -> Tensor:
    """Causal (look-ahead) mask: query i may attend key j iff ``j <= i + (S - L)``.

    With ``S == L`` this is the lower-triangular matrix of the decoder (Vaswani et al. 2017,
    §3.2.3). With ``S > L`` the queries are the *last* L positions of a length-S sequence,
    which is how a KV cache lines up new queries with cached keys.

    Args:
        L: number of queries (int >= 1).
        S: number of keys (int >= L); defaults to ``L``.
        device: device of the result.

    Returns:
        ``(L, S)`` bool tensor, True = may attend.

    Raises:
        ValueError: if ``L < 1`` or ``S < L`` (some query would see no key).

    Example (L = 4)::

        [[T, F, F, F],
         [T, T, F, F],
         [T, T, T, F],
         [T, T, T, T]]
    """
    S = L if S is None else S
    if not isinstance(L, int) or L < 1:
        raise ValueError(f"causal_mask needs L >= 1 queries, got L={L!r}.")
    if not isinstance(S, int) or S < L:
        raise ValueError(
            f"causal_mask needs S >= L (keys include every query position), got L={L}, S={S!r}. "
            f"With a KV cache, S is the cached length plus the new tokens."
        )
    # diagonal S - L shifts the triangle right so the last query sees every key.
    return torch.ones(L, S, dtype=torch.bool, device=device).tril(diagonal=S - L)  # (L, S)


def padding_mask(lengths: Tensor | list[int], S: int) -> Tensor:
    """Key padding mask from sequence lengths: True = real token that may be attended.

    Sequences are assumed right-padded: example b has real tokens at positions
    ``0 .. lengths[b] - 1`` and padding after.

    Args:
        lengths: ``(B,)`` integer tensor or list of ints, each in ``1 .. S``.
        S: padded sequence length.

    Returns:
        ``(B, S)`` bool tensor. Add axes before use: ``pad[:, None, :]`` -> ``(B, 1, S)``,
        ``pad[:, None, None, :]`` -> ``(B, 1, 1, S)``.

    Raises:
        ValueError: if ``lengths`` is not 1-D, or a length is < 1 or > S.
        TypeError: if ``lengths`` is not integer.
    """
    lengths = torch.as_tensor(lengths)
    check_rank(lengths, "lengths", 1, "(B,)")
    if lengths.dtype.is_floating_point or lengths.dtype == torch.bool:
        raise TypeError(f"lengths must be integers, got dtype {lengths.dtype}; use lengths.long().")
    if lengths.numel() and (int(lengths.min()) < 1 or int(lengths.max()) > S):
        raise ValueError(
            f"every length must be in 1..S={S}, got lengths={lengths.tolist()}. "
            f"An empty sequence would leave its queries nothing to attend to."
        )
    positions = torch.arange(S, device=lengths.device)  # (S,)
    return positions[None, :] < lengths[:, None]  # (B, S)


def combine_masks(*masks: Tensor | None) -> Tensor | None:
    """Logical AND of bool masks with broadcasting; ``None`` entries are ignored.

    A position may be attended only if every mask allows it, e.g.
    ``combine_masks(causal_mask(L), pad[:, None, :])`` -> ``(B, L, L)``.

    Args:
        *masks: bool tensors with broadcast-compatible shapes, or ``None``.

    Returns:
        The broadcast AND, or ``None`` if every argument is ``None``.

    Raises:
        TypeError: if a mask is not bool. ValueError: if the shapes do not broadcast.
    """
    result = None
    for i, m in enumerate(masks):
        if m is None:
            continue
        check_bool_mask(m, f"masks[{i}]")
        if result is None:
            result = m
            continue
        try:
            torch.broadcast_shapes(result.shape, m.shape)
        except RuntimeError:
            raise ValueError(
                f"masks[{i}] of shape {shape_str(m)} does not broadcast with the masks before it "
                f"(combined shape {shape_str(result)}). Add axes explicitly, e.g. pad[:, None, :]."
            ) from None
        result = result & m
    return result
