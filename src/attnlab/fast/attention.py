"""Causal self-attention tuned for speed: W_Q, W_K, W_V stored once as one packed matrix.

The numbers are those of :class:`attnlab.nn.MultiHeadAttention` used as self-attention
(Vaswani et al. 2017, §3.2.2; tested in ``tests/nn/test_fast_equivalence.py``); what differs is
how they are computed:

* ``qkv``: one ``Linear(d_model, 3 d_model)`` whose weight rows are ``[W_Q; W_K; W_V]`` (the
  layout of nanoGPT's ``c_attn``), so the three projections are one matrix product forward and
  backward -- what the step of a small model spends its time on;
* :func:`fused_attention`: torch's fused kernel, except for bf16/fp16 on the CPU (see there);
* :meth:`FastSelfAttention.decode_step`: one new token through the layer as plain function calls
  on a :class:`AttentionPlan` gathered once per generation.

:mod:`attnlab.fast.convert` maps the weights to and from the reference layout.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.nn.kv_cache import KVCache
from attnlab.nn.mha import attention_mask

__all__ = ["fused_attention", "FastSelfAttention", "AttentionPlan"]


def fused_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout_p: float = 0.0,
                    is_causal: bool = False) -> Tensor:
    """``softmax(Q Kᵀ / √d_k + M) V`` by ``F.scaled_dot_product_attention`` (Vaswani et al. 2017, Eq. 1).

    Args:
        q: ``(B, H, L, d_k)``; k: ``(B, H, S, d_k)``; v: ``(B, H, S, d_v)``; one float dtype.
        mask: bool, broadcastable to ``(B, H, L, S)``, True = may attend; or None.
        dropout_p: attention-weight dropout probability (0.0 in evaluation).
        is_causal: the square causal mask without building it (``mask`` must be None).

    Returns:
        ``(B, H, L, d_v)`` in ``q``'s dtype.

    On the CPU with bf16/fp16 inputs (under ``torch.autocast``) the attention itself runs in
    float32: torch's CPU flash-attention kernel takes about 3.5x longer backward in bf16 than in
    float32 (measured at L = 64, d_k = 32, torch 2.13: 3.6 against 1.0 ms per call), which cost
    more than the bf16 matrix products saved. The projections around it stay in bf16.
    """
    if q.device.type == "cpu" and q.dtype in (torch.bfloat16, torch.float16):
        with torch.autocast("cpu", enabled=False):
            out = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask,
                                                 dropout_p=dropout_p, is_causal=is_causal)
        return out.to(q.dtype)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal)


class AttentionPlan(NamedTuple):
    """What :meth:`FastSelfAttention.decode_step` reads, gathered once per generation."""

    qkv_weight: Tensor  # (3 d_model, d_model)
    qkv_bias: Tensor | None  # (3 d_model,)
    n_heads: int
    d_k: int
    rotary: nn.Module | None
    out_weight: Tensor  # W^O: (d_model, d_model)
    out_bias: Tensor | None


class FastSelfAttention(nn.Module):
    """Multi-head self-attention with the projections packed: the fast twin of
    :class:`attnlab.nn.MultiHeadAttention` (self-attention only; no attention weights returned).

    Args:
        d_model, n_heads, bias, dropout: as :class:`attnlab.nn.MultiHeadAttention`.

    Attributes:
        qkv: ``nn.Linear(d_model, 3 d_model)``; weight rows ``0:d``, ``d:2d``, ``2d:3d`` are the
            reference's ``w_q``, ``w_k``, ``w_v`` weights (biases likewise).
        w_o: ``nn.Linear(d_model, d_model)``, the reference's ``w_o``.
        rotary: ``None`` or a :class:`attnlab.nn.RotaryEmbedding` (as the reference).

    Raises:
        ValueError: ``d_model % n_heads != 0``.
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = True, dropout: float = 0.0) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}.")
        self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
        self.dropout = dropout
        self.rotary: nn.Module | None = None
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x: Tensor, *, attn_mask: Tensor | None = None, key_padding_mask: Tensor | None = None,
                is_causal: bool = False, cache: KVCache | None = None) -> tuple[Tensor, None]:
        """``x: (B, L, d_model)`` -> ``(out (B, L, d_model), None)``.

        The arguments are those of :meth:`attnlab.nn.MultiHeadAttention.forward` for
        self-attention (masks bool, True = may attend; ``cache`` a :class:`KVCache`). The inputs
        are not checked beyond what :func:`attnlab.nn.mha.attention_mask` checks: this is the
        path of a model whose inputs were checked once, at the top.
        """
        B, L, _ = x.shape
        qkv = self.qkv(x).view(B, L, 3, self.n_heads, self.d_k)  # (B, L, 3, H, d_k): [q | k | v], heads side by side
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # 3 x (B, H, L, d_k)
        if self.rotary is not None:  # RoPE at the absolute positions
            start = 0 if cache is None else cache.position
            q, k = self.rotary(q, offset=start), self.rotary(k, offset=start)
        if cache is not None:
            k, v = cache.update(k, v)  # (B, H, S, d_k), S = cached + L
        S = k.shape[2]
        mask = attention_mask(B, self.n_heads, L, S, attn_mask, key_padding_mask, is_causal, x.device)
        plain_causal = is_causal and mask is None and L == S and L > 1
        out = fused_attention(q, k, v, mask, self.dropout if self.training else 0.0, plain_causal)  # (B, H, L, d_k)
        out = out.transpose(1, 2).reshape(B, L, self.d_model)  # merge heads: (B, L, H, d_k) -> (B, L, d_model)
        return self.w_o(out), None

    def plan(self) -> AttentionPlan:
        """This layer's weights and settings for :meth:`decode_step`."""
        return AttentionPlan(self.qkv.weight, self.qkv.bias, self.n_heads, self.d_k, self.rotary,
                             self.w_o.weight, self.w_o.bias)

    @staticmethod
    def decode_step(x: Tensor, cache: KVCache, plan: AttentionPlan) -> Tensor:
        """Causal self-attention of ONE new position ``x: (B, 1, d_model)`` -> ``(B, 1, d_model)``.

        ``forward(x, cache=cache, is_causal=True)[0]`` in evaluation mode without gradients,
        minus the module call: the newest query may attend to every cached key, so no mask.
        The caller guarantees a cache of the same batch and no gradients.
        """
        w, b, H, d_k, rotary, w_o, b_o = plan
        B = x.shape[0]
        qkv = F.linear(x, w, b).view(B, 1, 3, H, d_k)  # (B, 1, 3, H, d_k)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # 3 x (B, H, 1, d_k)
        if rotary is not None:  # RoPE at the new token's absolute position
            q, k = rotary(q, offset=cache.position), rotary(k, offset=cache.position)
        k, v = cache._append(k, v)  # (B, H, S, d_k), S = cached + 1: views, old keys not copied
        out = F.scaled_dot_product_attention(q, k, v)  # (B, H, 1, d_k)
        return F.linear(out.transpose(1, 2).reshape(x.shape), w_o, b_o)  # merge heads -> (B, 1, d_model), W^O
