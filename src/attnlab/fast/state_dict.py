"""The one difference between the reference's and the fast model's ``state_dict``: the attention projections.

The reference's self-attention holds ``w_q``, ``w_k``, ``w_v`` as three ``Linear(d_model, d_model)``; the fast one
holds them stacked row-wise in one ``qkv = Linear(d_model, 3 d_model)`` (weight ``[W_Q; W_K; W_V]``:
``(3 d_model, d_model)``, bias ``(3 d_model,)``; nanoGPT's ``c_attn`` layout; the projections are Vaswani et al.
2017, §3.2.2). These two functions map one layout to the other key by key (the table is in
:mod:`attnlab.fast.convert`); they import neither model, so both models and the converter can use them.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["fast_state_dict", "reference_state_dict"]

_PARTS = ("w_q", "w_k", "w_v")


def fast_state_dict(state: dict[str, Tensor]) -> dict[str, Tensor]:
    """A reference ``state_dict`` in the fast layout: every ``w_q``/``w_k``/``w_v`` triple of a
    self-attention stacked into ``qkv`` (see the module's table); other keys unchanged.

    ``(d_model, d_model)`` x 3 -> ``(3 d_model, d_model)`` (biases ``(d_model,)`` x 3 -> ``(3 d_model,)``).

    Raises:
        ValueError: a ``w_q`` key without its ``w_k``/``w_v`` partners.
    """
    out: dict[str, Tensor] = {}
    for key, value in state.items():
        prefix, _, leaf = key.rpartition(".")  # e.g. "blocks.0.self_attn.w_q", "weight"
        base, _, part = prefix.rpartition(".") if "." in prefix else ("", "", prefix)
        if part not in _PARTS:
            out[key] = value
            continue
        if part != "w_q":
            continue  # stacked with its w_q
        head = f"{base}." if base else ""
        names = [f"{head}{p}.{leaf}" for p in _PARTS]
        missing = [n for n in names if n not in state]
        if missing:
            raise ValueError(f"{key} has no partner {missing[0]} to stack into {head}qkv.{leaf}; "
                             f"is this the state_dict of an attnlab.nn self-attention?")
        out[f"{head}qkv.{leaf}"] = torch.cat([state[n] for n in names])  # (3 d_model, d_model) or (3 d_model,)
    return out


def reference_state_dict(state: dict[str, Tensor]) -> dict[str, Tensor]:
    """A fast ``state_dict`` in the reference layout: every ``qkv`` split into ``w_q``, ``w_k``,
    ``w_v`` (three equal row blocks: ``(3 d_model, d_model)`` -> ``(d_model, d_model)`` x 3); other
    keys unchanged. The inverse of :func:`fast_state_dict`.

    Raises:
        ValueError: a ``qkv`` tensor whose first dimension is not divisible by 3.
    """
    out: dict[str, Tensor] = {}
    for key, value in state.items():
        prefix, _, leaf = key.rpartition(".")
        base, _, part = prefix.rpartition(".") if "." in prefix else ("", "", prefix)
        if part != "qkv":
            out[key] = value
            continue
        if value.shape[0] % 3:
            raise ValueError(f"{key} has {value.shape[0]} rows; a packed [W_Q; W_K; W_V] needs a multiple of 3.")
        head = f"{base}." if base else ""
        for p, chunk in zip(_PARTS, value.chunk(3), strict=True):  # (d_model, ...) each
            out[f"{head}{p}.{leaf}"] = chunk.clone()
    return out
