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

__all__ = ["split_heads", "merge_heads", "attention_mask", "MultiHeadAttention", "KVCache"]


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

        q = split_heads(self.w_q(query), self.n_heads)  # (B, L, d_model) -> (B, H, L, d_k)
        k = split_heads(self.w_k(key), self.n_heads)  # (B, S, d_model) -> (B, H, S, d_k)
        v = split_heads(self.w_v(value), self.n_heads)  # (B, S, d_model) -> (B, H, S, d_v)
        if self.rotary is not None and self_attention:  # RoPE: rotate q and k by their absolute positions
            start = 0 if cache is None else cache.position
            q, k = self.rotary(q, offset=start), self.rotary(k, offset=start)  # (B, H, L, d_k) each
        if cache is not None:
            k, v = cache.update(k, v)  # (B, H, S, d_k) with S = cached + L
        S = k.shape[2]

        mask = attention_mask(B, self.n_heads, L, S, attn_mask, key_padding_mask, is_causal, q.device)
        p = self.dropout if self.training else 0.0
        if self.fused and not need_weights:  # torch's kernel: the same numbers, weights never formed
            if mask is not None:
                check_no_empty_rows(mask, "combined attention mask")
            plain_causal = is_causal and mask is None and L == S and L > 1  # no mask built: is_causal=True
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p, is_causal=plain_causal)
            weights = None  # (B, H, L, d_v) above
        else:
            if is_causal and mask is None and L > 1:
                mask = causal_mask(L, S, device=q.device)  # (L, S)
            out, weights = scaled_dot_product_attention(q, k, v, mask, dropout_p=p)  # (B, H, L, d_v)
        out = self.w_o(merge_heads(out))  # (B, H, L, d_v) -> (B, L, d_model) -> W^O
        return out, (weights if need_weights else None)


def attention_mask(B: int, H: int, L: int, S: int, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                   is_causal: bool, device: torch.device | str | None = None) -> Tensor | None:
    """The masks of :meth:`MultiHeadAttention.forward` combined into one bool mask, or None.

    Args:
        B, H, L, S: batch, heads, query length, key length (cached keys included).
        attn_mask: bool ``(L, S)``, ``(B, L, S)`` or ``(B, H, L, S)``, True = may attend.
        key_padding_mask: bool ``(B, S)``, True = real token.
        is_causal: add ``causal_mask(L, S)``.
        device: where the causal mask is built.

    Returns:
        A bool tensor broadcastable to ``(B, H, L, S)``, True = may attend; None when nothing is
        masked or in the plain square causal case (L = S > 1, no other mask), which a fused kernel
        takes as ``is_causal=True``. One query with a cache (L = 1) sees every key: no causal mask.

    Raises:
        TypeError: a mask that is not bool.
        ValueError: a mask whose shape does not fit ``(B, H, L, S)``.
    """
    layout = "(B, H, L, S)"
    target = (B, H, L, S)
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
