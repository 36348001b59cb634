"""Encoder and decoder blocks (Vaswani et al. 2017, §3.1, Figure 1).

Each sublayer f (self-attention, cross-attention, feed-forward) is wrapped in a residual
connection and a LayerNorm. Two placements exist, both shown in ``forward``:

* post-LN (the paper, §3.1): ``x = LN(x + Dropout(f(x)))``;
* pre-LN (GPT-2, Radford et al. 2019; Xiong et al. 2020): ``x = x + Dropout(f(LN(x)))``,
  which keeps an un-normalised residual stream and trains more stably without warm-up.

Dropout follows §5.4 ("Residual Dropout"): on each sublayer's output before the residual
add. Attention-weight dropout happens inside :class:`MultiHeadAttention`.
"""

from __future__ import annotations

from torch import Tensor, nn

from ._checks import check_last_dim, check_rank
from .ffn import FeedForward
from .mha import KVCache, MultiHeadAttention


class EncoderBlock(nn.Module):
    """Self-attention + feed-forward, each with residual and LayerNorm (§3.1, encoder).

    Args:
        d_model, n_heads, d_ff: widths (``d_model % n_heads == 0``).
        dropout: residual dropout and attention-weight dropout probability.
        activation: ``"relu"`` or ``"gelu"`` for the FFN.
        norm_first: False = post-LN (paper), True = pre-LN.
        bias: biases in linear layers and LayerNorms.
        layer_norm_eps: LayerNorm epsilon.

    Submodules: ``self_attn``, ``ffn``, ``norm1``, ``norm2``, ``dropout1``, ``dropout2``
    (same roles and order as ``torch.nn.TransformerEncoderLayer``).
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, activation: str = "relu",
                 norm_first: bool = False, bias: bool = True, layer_norm_eps: float = 1e-5) -> None:
        super().__init__()
        self.d_model, self.norm_first = d_model, norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, bias=bias, dropout=dropout)
        self.ffn = FeedForward(d_model, d_ff, activation=activation, bias=bias)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)

    def forward(self, x: Tensor, *, attn_mask: Tensor | None = None,
                key_padding_mask: Tensor | None = None) -> Tensor:
        """``x: (B, L, d_model) -> (B, L, d_model)``.

        Args:
            attn_mask: bool ``(L, L)``/``(B, L, L)``/``(B, H, L, L)``, True = may attend.
            key_padding_mask: bool ``(B, L)``, True = real token.

        Raises:
            ValueError / TypeError: as :class:`MultiHeadAttention` (shapes, mask dtype).
        """
        check_rank(x, "x", 3, "(B, L, d_model)")
        check_last_dim(x, "x", self.d_model)
        if self.norm_first:  # pre-LN: x + f(LN(x))
            x = x + self._self_attention(self.norm1(x), attn_mask, key_padding_mask)
            x = x + self.dropout2(self.ffn(self.norm2(x)))
        else:  # post-LN (Vaswani et al. 2017): LN(x + f(x))
            x = self.norm1(x + self._self_attention(x, attn_mask, key_padding_mask))
            x = self.norm2(x + self.dropout2(self.ffn(x)))
        return x

    def _self_attention(self, x: Tensor, attn_mask, key_padding_mask) -> Tensor:
        out, _ = self.self_attn(x, attn_mask=attn_mask, key_padding_mask=key_padding_mask)
        return self.dropout1(out)  # (B, L, d_model)


class DecoderBlock(nn.Module):
    """Masked self-attention, cross-attention, feed-forward (§3.1, decoder).

    With ``cross_attention=False`` it is the GPT block (decoder-only: no encoder memory).

    Args:
        d_model, n_heads, d_ff, dropout, activation, norm_first, bias, layer_norm_eps:
            as :class:`EncoderBlock`.
        cross_attention: include the encoder-decoder attention sublayer.

    Submodules: ``self_attn``, ``cross_attn`` (None without cross-attention), ``ffn``,
    ``norm1``, ``norm2``, ``norm3`` (None without cross-attention), ``dropout1..3``
    (the order of ``torch.nn.TransformerDecoderLayer``, whose ``multihead_attn`` is our
    ``cross_attn``).
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, activation: str = "relu",
                 norm_first: bool = False, cross_attention: bool = True, bias: bool = True,
                 layer_norm_eps: float = 1e-5) -> None:
        super().__init__()
        self.d_model, self.norm_first = d_model, norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, bias=bias, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, bias=bias, dropout=dropout) if cross_attention else None
        self.ffn = FeedForward(d_model, d_ff, activation=activation, bias=bias)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias) if cross_attention else None
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1, self.dropout2, self.dropout3 = nn.Dropout(dropout), nn.Dropout(dropout), nn.Dropout(dropout)

    def forward(self, x: Tensor, memory: Tensor | None = None, *, attn_mask: Tensor | None = None,
                key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                is_causal: bool = True, cache: KVCache | None = None) -> Tensor:
        """``x: (B, L, d_model)``, ``memory: (B, S, d_model)`` -> ``(B, L, d_model)``.

        Args:
            memory: encoder output; required iff the block has cross-attention.
            attn_mask: extra bool mask for self-attention, True = may attend.
            key_padding_mask: bool ``(B, L)`` (``(B, cached + L)`` with a cache), True = real.
            memory_key_padding_mask: bool ``(B, S)`` for cross-attention, True = real.
            is_causal: causal self-attention (default True: this is a decoder).
            cache: :class:`KVCache` for the self-attention during incremental decoding.

        Raises:
            ValueError: wrong shapes, or ``memory`` missing/present when it should not be.
            TypeError: a non-bool mask.
        """
        check_rank(x, "x", 3, "(B, L, d_model)")
        check_last_dim(x, "x", self.d_model)
        if (memory is None) != (self.cross_attn is None):
            raise ValueError(
                "memory (the encoder output, (B, S, d_model)) is required by a DecoderBlock with "
                "cross-attention and not accepted without it; "
                f"this block has cross_attention={self.cross_attn is not None}."
            )
        sa = dict(attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal, cache=cache)
        if self.norm_first:  # pre-LN: x + f(LN(x))
            x = x + self._self_attention(self.norm1(x), sa)
            if self.cross_attn is not None:
                # norm2 is built with cross_attn; memory was checked against cross_attn above
                assert self.norm2 is not None and memory is not None
                x = x + self._cross_attention(self.norm2(x), memory, memory_key_padding_mask)
            x = x + self.dropout3(self.ffn(self.norm3(x)))
        else:  # post-LN (Vaswani et al. 2017): LN(x + f(x))
            x = self.norm1(x + self._self_attention(x, sa))
            if self.cross_attn is not None:
                assert self.norm2 is not None and memory is not None  # as in the pre-LN branch
                x = self.norm2(x + self._cross_attention(x, memory, memory_key_padding_mask))
            x = self.norm3(x + self.dropout3(self.ffn(x)))
        return x

    def _self_attention(self, x: Tensor, sa: dict) -> Tensor:
        # sa: the self-attention masks / causal flag / KV cache given to forward
        out, _ = self.self_attn(x, **sa)
        return self.dropout1(out)  # (B, L, d_model)

    def _cross_attention(self, x: Tensor, memory: Tensor, memory_key_padding_mask) -> Tensor:
        # queries from the decoder, keys and values from the encoder (§3.2.3)
        assert self.cross_attn is not None, "called only by a block with cross-attention"
        out, _ = self.cross_attn(x, memory, memory, key_padding_mask=memory_key_padding_mask)
        return self.dropout2(out)  # (B, L, d_model)
