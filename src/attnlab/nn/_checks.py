"""Shared input validation for ``attnlab.nn``.

Every check here reads only shapes and dtypes (Python integers), never tensor values, so
it costs microseconds and never forces a device synchronisation. The one exception is
:func:`check_no_empty_rows`, which reads mask values; it is only called when a mask
tensor is actually supplied, never on the plain causal fast path used in training.

Messages follow one pattern: what was expected, what was received, and what to do.
"""

from __future__ import annotations

import torch
from torch import Tensor


def shape_str(x: Tensor) -> str:
    """``(2, 3, 4)``-style string of a tensor's shape, for error messages."""
    return str(tuple(x.shape))


def check_tensor(x: object, name: str) -> None:
    """Raise ``TypeError`` unless ``x`` is a ``torch.Tensor``."""
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor, got {type(x).__name__}. "
            f"Convert it with torch.as_tensor(...) first."
        )


def check_rank(x: Tensor, name: str, rank: int, layout: str) -> None:
    """Raise ``ValueError`` unless ``x.dim() == rank``; ``layout`` names the axes, e.g. ``(B, L, d_model)``."""
    check_tensor(x, name)
    if x.dim() != rank:
        hint = ""
        if x.dim() == rank - 1:
            hint = " If this is a single example, add a batch axis with x.unsqueeze(0)."
        raise ValueError(
            f"{name} must have {rank} dimensions {layout}, got shape {shape_str(x)} "
            f"({x.dim()} dimensions).{hint}"
        )


def check_min_rank(x: Tensor, name: str, rank: int, layout: str) -> None:
    """Raise ``ValueError`` unless ``x.dim() >= rank``."""
    check_tensor(x, name)
    if x.dim() < rank:
        raise ValueError(
            f"{name} must have at least {rank} dimensions {layout}, got shape {shape_str(x)}."
        )


def check_last_dim(x: Tensor, name: str, expected: int, what: str = "d_model") -> None:
    """Raise ``ValueError`` unless the last axis of ``x`` has size ``expected``."""
    if x.shape[-1] != expected:
        raise ValueError(
            f"{name} must have last dimension {what}={expected}, got shape {shape_str(x)} "
            f"(last dimension {x.shape[-1]}). Project it to {expected} features first, or "
            f"build the module with {what}={x.shape[-1]}."
        )


def check_divisible(d_model: int, n_heads: int) -> None:
    """Raise ``ValueError`` unless ``n_heads`` divides ``d_model`` (so d_k = d_model / n_heads)."""
    if not isinstance(n_heads, int) or n_heads < 1:
        raise ValueError(f"n_heads must be a positive int, got {n_heads!r}.")
    if not isinstance(d_model, int) or d_model < 1:
        raise ValueError(f"d_model must be a positive int, got {d_model!r}.")
    if d_model % n_heads != 0:
        options = [h for h in range(1, min(d_model, 64) + 1) if d_model % h == 0]
        raise ValueError(
            f"d_model={d_model} is not divisible by n_heads={n_heads}, so heads cannot have "
            f"equal width d_k = d_model / n_heads. Choose n_heads from {options} or change d_model."
        )


def check_bool_mask(mask: Tensor, name: str) -> None:
    """Raise ``TypeError`` unless ``mask`` is a bool tensor (True = may attend)."""
    check_tensor(mask, name)
    if mask.dtype != torch.bool:
        raise TypeError(
            f"{name} must be a bool tensor with True = may attend, got dtype {mask.dtype}. "
            f"Build masks with attnlab.nn.causal_mask / padding_mask, convert a 0/1 mask with "
            f"mask.bool(), or an additive 0/-inf mask with (mask == 0)."
        )


def check_mask_shape(mask: Tensor, name: str, target: tuple[int, ...], layout: str) -> None:
    """Raise ``ValueError`` unless ``mask`` broadcasts to ``target`` (the shape of the scores)."""
    ok = mask.dim() <= len(target)
    if ok:
        try:
            ok = tuple(torch.broadcast_shapes(mask.shape, target)) == tuple(target)
        except RuntimeError:
            ok = False
    if not ok:
        raise ValueError(
            f"{name} of shape {shape_str(mask)} does not broadcast to the attention scores "
            f"{layout} = {tuple(target)}. A padding mask (B, S) needs explicit axes, e.g. "
            f"pad[:, None, :] for (B, L, S) or pad[:, None, None, :] for (B, H, L, S)."
        )


def check_no_empty_rows(mask: Tensor, name: str = "mask") -> None:
    """Raise ``ValueError`` if some query row of ``mask`` (..., L, S) allows no key at all.

    Such a row would give softmax over only -inf, i.e. NaN. This reads mask values.
    """
    allowed = mask.any(dim=-1)  # (..., L)
    if not bool(allowed.all()):
        bad = (~allowed).nonzero().tolist()
        shown = ", ".join(str(tuple(i)) for i in bad[:5]) + (" ..." if len(bad) > 5 else "")
        raise ValueError(
            f"{name} leaves {len(bad)} query row(s) with no key they may attend to "
            f"(indices {shown} over the mask's leading axes + query axis); softmax over only "
            f"-inf is undefined (NaN). Allow at least one key per row, e.g. let padding "
            f"queries attend to themselves, or pad on the right instead of the left."
        )
