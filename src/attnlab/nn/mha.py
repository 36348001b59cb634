"""Multi-head attention (Vaswani et al. 2017, §3.2.2), with head splitting and merging.

``MultiHead(Q, K, V) = Concat(head_1, ..., head_H) W^O`` with
``head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)``. All heads' projections are computed
at once by one ``d_model -> d_model`` linear layer each (``w_q``, ``w_k``, ``w_v``); the
result is then *split* into H heads of width ``d_k = d_model / H`` (:func:`split_heads`),
attended per head, and *merged* back (:func:`merge_heads`) before ``w_o``.

For incremental decoding the layer appends to a :class:`~attnlab.nn.kv_cache.KVCache`
(defined in ``kv_cache.py``, re-exported here).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import (
    check_bool_mask,
    check_divisible,
    check_last_dim,
    check_mask_shape,
    check_no_empty_rows,
    check_rank,
    shape_str,
)
from .attention import scaled_dot_product_attention
from .kv_cache import KVCache
from .masks import causal_mask

__all__ = ["split_heads", "merge_heads", "MultiHeadAttention", "KVCache"]


def split_heads(x: Tensor, n_heads: int) -> Tensor:
    """``(B, L, d_model) -> (B, H, L, d_k)`` with ``d_k = d_model // n_heads``.

    Head h gets features ``h*d_k .. (h+1)*d_k - 1`` of every position.

    Raises:
        ValueError: if ``x`` is not 3-D or ``d_model`` is not divisible by ``n_heads``.
    """
    check_rank(x, "x", 3, "(B, L, d_model)")
    B, L, d_model = x.shape
    check_divisible(d_model, n_heads)
    x = x.view(B, L, n_heads, d_model // n_heads)  # (B, L, H, d_k)
    return x.transpose(1, 2)  # (B, H, L, d_k)


def merge_heads(x: Tensor) -> Tensor:
    """``(B, H, L, d_k) -> (B, L, H * d_k)``: the inverse of :func:`split_heads` (the Concat).

    Raises:
        ValueError: if ``x`` is not 4-D.
    """
    check_rank(x, "x", 4, "(B, H, L, d_k)")
    B, H, L, d_k = x.shape
    x = x.transpose(1, 2)  # (B, L, H, d_k)
    return x.reshape(B, L, H * d_k)  # (B, L, d_model): heads side by side


class MultiHeadAttention(nn.Module):
    """Multi-head attention, Vaswani et al. 2017, §3.2.2 (Figure 2, right).

    Args:
        d_model: model width; input and output feature size.
        n_heads: number of heads H; must divide ``d_model`` (``d_k = d_v = d_model / H``).
        bias: whether ``w_q, w_k, w_v, w_o`` have biases.
        dropout: dropout on the attention weights during training (as in PyTorch's
            ``nn.MultiheadAttention``; the paper's residual dropout lives in the blocks).

    Attributes:
        w_q, w_k, w_v, w_o: ``nn.Linear(d_model, d_model)``; ``w_q`` holds all heads' W_i^Q
            side by side (rows ``h*d_k:(h+1)*d_k`` of its weight belong to head h), etc.
        fused: if True (default), use ``torch.nn.functional.scaled_dot_product_attention``
            whenever the weights are not requested; otherwise always the explicit path.
        rotary: ``None`` (default) or a :class:`~attnlab.nn.RotaryEmbedding` of width ``d_k``
            applied to the queries and keys of *self*-attention after ``split_heads``, at the
            positions ``cache.position ..`` with a cache (``0 ..`` without). Set by
            ``GPT(GPTConfig(positional="rotary"))``.
        n_heads, d_k, dropout.

    Raises:
        ValueError: if ``d_model % n_heads != 0``.

    Inputs are float tensors of one dtype; masks are bool (True = may attend). Returned
    weights are the softmax probabilities before attention dropout.

    Example::

        mha = MultiHeadAttention(d_model=8, n_heads=2)
        x = torch.randn(1, 3, 8)                                  # (B, L, d_model)
        out, w = mha(x, is_causal=True, need_weights=True)        # (1, 3, 8), (1, 2, 3, 3)
        memory = torch.randn(1, 5, 8)                             # (B, S, d_model)
        out, _ = mha(x, memory)                                   # cross-attention: (1, 3, 8)
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = True, dropout: float = 0.0) -> None:
        super().__init__()
        check_divisible(d_model, n_heads)
        self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
        self.dropout = dropout
        self.fused = True
        self.rotary: nn.Module | None = None
        self._frozen_qkv: tuple[Tensor, Tensor | None] | None = None  # see _qkv_weight
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        *,
        attn_mask: Tensor | None = None,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = False,
        cache: KVCache | None = None,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key``/``value`` with H heads.

        Args:
            query: ``(B, L, d_model)``.
            key: ``(B, S, d_model)``; defaults to ``query`` (self-attention). Give the
                encoder output here for cross-attention.
            value: ``(B, S, d_model)``; defaults to ``key``.
            attn_mask: bool ``(L, S)``, ``(B, L, S)`` or ``(B, H, L, S)``, True = may attend.
            key_padding_mask: bool ``(B, S)``, True = real token (not padding).
            need_weights: return the ``(B, H, L, S)`` attention weights (explicit path).
            cache: a :class:`KVCache` for incremental self-attention: the new keys/values
                are appended and the queries attend to everything cached. Then S = cached
                length + L, and masks must cover all S keys.
            is_causal: apply the causal mask ``causal_mask(L, S)`` (query i sees keys
                ``j <= i + S - L``). Cheaper than passing the mask: in the plain square case
                the fused kernel is called with ``is_causal=True`` and no mask is built.

        Returns:
            ``out``: ``(B, L, d_model)``; ``weights``: ``(B, H, L, S)`` if ``need_weights``
            else ``None``.

        Raises:
            ValueError: wrong ranks, last dimension not ``d_model``, batch sizes or key/value
                lengths that disagree, masks that do not fit ``(B, H, L, S)``, a query row
                with no allowed key, or ``cache`` with cross-attention.
            TypeError: a mask that is not bool.
        """
        if key is None and value is not None:
            raise ValueError("value was given without key; pass key too (cross-attention) or neither (self-attention).")
        self_attention = key is None
        key = query if key is None else key
        value = key if value is None else value
        check_rank(query, "query", 3, "(B, L, d_model)")
        check_last_dim(query, "query", self.d_model)
        if not self_attention:
            check_rank(key, "key", 3, "(B, S, d_model)")
            check_rank(value, "value", 3, "(B, S, d_model)")
            check_last_dim(key, "key", self.d_model)
            check_last_dim(value, "value", self.d_model)
            if key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]:
                raise ValueError(
                    f"query {shape_str(query)}, key {shape_str(key)} and value {shape_str(value)} "
                    f"must share the batch size B, and key/value the length S."
                )
            if cache is not None:
                raise ValueError("cache is only for self-attention: call with key=None, value=None.")
        B, L, _ = query.shape

        if self_attention:  # w_q(x), w_k(x), w_v(x) as ONE matmul, split into heads in one reshape
            q, k, v = self._packed_qkv(query)  # (B, H, L, d_k) each
        else:
            q = split_heads(self.w_q(query), self.n_heads)  # (B, L, d_model) -> (B, H, L, d_k)
            k = split_heads(self.w_k(key), self.n_heads)  # (B, S, d_model) -> (B, H, S, d_k)
            v = split_heads(self.w_v(value), self.n_heads)  # (B, S, d_model) -> (B, H, S, d_v)
        if self.rotary is not None and self_attention:  # RoPE: rotate q and k by their absolute positions
            start = 0 if cache is None else cache.position
            q, k = self.rotary(q, offset=start), self.rotary(k, offset=start)  # (B, H, L, d_k) each
        if cache is not None:
            k, v = cache.update(k, v)  # (B, H, S, d_k) with S = cached + L
        S = k.shape[2]

        mask = self._build_mask(B, L, S, attn_mask, key_padding_mask, is_causal, q.device)
        p = self.dropout if self.training else 0.0
        if self.fused and not need_weights:
            plain_causal = is_causal and mask is None and L == S and L > 1
            if mask is not None:
                check_no_empty_rows(mask, "combined attention mask")
            out = _fused_attention(q, k, v, mask, p, plain_causal)  # (B, H, L, d_v)
            weights = None  # the fused kernel never forms the weights
        else:
            if is_causal and mask is None and L > 1:
                mask = causal_mask(L, S, device=q.device)  # (L, S)
            out, weights = scaled_dot_product_attention(q, k, v, mask, dropout_p=p)  # (B, H, L, d_v)
        out = self.w_o(merge_heads(out))  # (B, H, L, d_v) -> (B, L, d_model) -> W^O
        return out, (weights if need_weights else None)

    def _packed_qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """``split_heads`` of ``w_q(x), w_k(x), w_v(x)`` for ``x: (B, L, d_model)``, by one matmul.

        Returns three ``(B, H, L, d_k)`` tensors: the same numbers as three separate projections
        followed by :func:`split_heads` (each output column is the same dot product), with one
        large matrix product instead of three small ones -- fewer calls forward and backward,
        which is what a step of a small model spends its time on.
        """
        w, b = self._qkv_weight()
        B, L, _ = x.shape
        qkv = F.linear(x, w, b).view(B, L, 3, self.n_heads, self.d_k)  # (B, L, 3, H, d_k): heads side by side
        return qkv.permute(2, 0, 3, 1, 4).unbind(0)  # 3 x (B, H, L, d_k)

    def _qkv_weight(self) -> tuple[Tensor, Tensor | None]:
        """``w_q, w_k, w_v`` stacked: weight ``(3 d_model, d_model)`` and bias ``(3 d_model,)`` or None.

        Stacked afresh at every call (a copy of 3 d_model² numbers): gradients then reach the
        three weights, and a stale copy is impossible (fused AdamW updates weights without
        bumping their version counters, so a kept stack could not tell that they changed). The
        one exception is ``_frozen_qkv``, which :meth:`attnlab.nn.GPT.generate` sets for its own
        duration only (no gradients, the weights cannot change) and clears afterwards.
        """
        if self._frozen_qkv is not None:
            return self._frozen_qkv
        w = torch.cat([self.w_q.weight, self.w_k.weight, self.w_v.weight])  # (3 d_model, d_model)
        b = None if self.w_q.bias is None else torch.cat([self.w_q.bias, self.w_k.bias, self.w_v.bias])
        return w, b

    def _decode_plan(self) -> tuple:
        """What :meth:`_decode_step` reads from this module, gathered into one tuple (see
        :meth:`attnlab.nn.DecoderBlock._decode_plan`): the stacked W_Q/W_K/W_V, W^O and settings."""
        w, b = self._qkv_weight()
        return w, b, self.n_heads, self.d_k, self.rotary, self.fused, self.w_o.weight, self.w_o.bias

    def _decode_step(self, x: Tensor, cache: KVCache, plan: tuple | None = None) -> Tensor:
        """Causal self-attention of ONE new position ``x: (B, 1, d_model)`` -> ``(B, 1, d_model)``.

        The same as ``forward(x, cache=cache, is_causal=True)[0]`` in evaluation mode without
        gradients, minus its checks and module hooks: the per-token path of
        :meth:`attnlab.nn.GPT.forward`, which checked its input. The newest query may attend to
        every cached key, so no mask is built. ``plan``: :meth:`_decode_plan` (None: gathered here).
        """
        w, b, H, d_k, rotary, fused, w_o, b_o = plan or self._decode_plan()
        B = x.shape[0]
        # _packed_qkv inlined with the plan's weights: calling it was slower per token (paired A/B, median 0.85)
        q, k, v = F.linear(x, w, b).view(B, 1, 3, H, d_k).permute(2, 0, 3, 1, 4).unbind(0)  # (B, H, 1, d_k) each
        if rotary is not None:  # RoPE at the new token's absolute position
            q, k = rotary(q, offset=cache.position), rotary(k, offset=cache.position)
        k, v = cache._append(k, v)  # (B, H, S, d_k), S = cached + 1: views, old keys not copied
        if fused:
            out = F.scaled_dot_product_attention(q, k, v)  # (B, H, 1, d_v)
        else:
            out, _ = scaled_dot_product_attention(q, k, v)
        return F.linear(out.transpose(1, 2).reshape(x.shape), w_o, b_o)  # merge_heads, then W^O

    def _build_mask(self, B, L, S, attn_mask, key_padding_mask, is_causal, device) -> Tensor | None:
        """Combine the masks into one bool tensor broadcastable to ``(B, H, L, S)``, or None.

        The plain square causal case (no other mask) returns None so the fused kernel can use
        ``is_causal=True``; L = 1 with a cache needs no causal mask at all (it sees every key).
        """
        layout = "(B, H, L, S)"
        target = (B, self.n_heads, L, S)
        mask = None
        if attn_mask is not None:
            check_bool_mask(attn_mask, "attn_mask")
            if attn_mask.dim() == 3:
                attn_mask = attn_mask[:, None, :, :]  # (B, L, S) -> (B, 1, L, S)
            if attn_mask.dim() not in (2, 4):
                raise ValueError(
                    f"attn_mask must be (L, S), (B, L, S) or (B, H, L, S) = {target}, "
                    f"got shape {shape_str(attn_mask)}."
                )
            check_mask_shape(attn_mask, "attn_mask", target, layout)
            mask = attn_mask
        if key_padding_mask is not None:
            check_bool_mask(key_padding_mask, "key_padding_mask")
            if tuple(key_padding_mask.shape) != (B, S):
                raise ValueError(
                    f"key_padding_mask must have shape (B, S) = {(B, S)} (True = real token), "
                    f"got {shape_str(key_padding_mask)}. With a KV cache, S counts cached keys too."
                )
            pad = key_padding_mask[:, None, None, :]  # (B, S) -> (B, 1, 1, S)
            mask = pad if mask is None else mask & pad
        if is_causal and L > 1 and (mask is not None or L != S):
            causal = causal_mask(L, S, device=device)  # (L, S)
            mask = causal if mask is None else mask & causal
        return mask


def _fused_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float,
                     is_causal: bool) -> Tensor:
    """``F.scaled_dot_product_attention`` (Vaswani et al. 2017, Eq. 1), with one CPU exception.

    ``q: (B, H, L, d_k)``, ``k: (B, H, S, d_k)``, ``v: (B, H, S, d_v)``, ``mask: (L, S)`` or
    broadcastable boolean (True = may attend) or None; returns ``(B, H, L, d_v)`` in ``q``'s dtype.
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
