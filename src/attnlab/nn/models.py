"""The encoder-decoder Transformer of Vaswani et al. 2017 (§3, Figure 1).

``Encoder``: N encoder blocks; ``Decoder``: N decoder blocks; ``Transformer``: token
embeddings scaled by √d_model (§3.4) + sinusoidal positions (§3.5) + dropout (§5.4), the two
stacks, and a linear output layer whose weight can be tied to the target embedding (§3.4:
"we share the same weight matrix between the two embedding layers and the pre-softmax linear
transformation"). With pre-LN blocks each stack ends with a final LayerNorm, because pre-LN
leaves the residual stream un-normalised.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ._checks import check_rank
from .blocks import DecoderBlock, EncoderBlock
from .mha import KVCache
from .positional import SinusoidalPositionalEncoding


class Encoder(nn.Module):
    """A stack of ``n_layers`` :class:`EncoderBlock` s (+ final LayerNorm if ``norm_first``).

    ``forward(x: (B, S, d_model), *, key_padding_mask: (B, S) bool | None) -> (B, S, d_model)``.
    Other arguments as :class:`EncoderBlock`.
    """

    def __init__(self, n_layers: int, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0,
                 activation: str = "relu", norm_first: bool = False, bias: bool = True) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            EncoderBlock(d_model, n_heads, d_ff, dropout, activation, norm_first, bias) for _ in range(n_layers)
        )
        self.norm = nn.LayerNorm(d_model, bias=bias) if norm_first else None

    def forward(self, x: Tensor, *, key_padding_mask: Tensor | None = None) -> Tensor:
        """``x: (B, S, d_model)`` (embedded source) -> memory ``(B, S, d_model)``.

        ``key_padding_mask``: bool ``(B, S)``, True = real token. Raises as :class:`EncoderBlock`.
        """
        for layer in self.layers:
            x = layer(x, key_padding_mask=key_padding_mask)  # (B, S, d_model)
        return x if self.norm is None else self.norm(x)


class Decoder(nn.Module):
    """A stack of ``n_layers`` :class:`DecoderBlock` s (+ final LayerNorm if ``norm_first``).

    ``forward(x: (B, L, d_model), memory: (B, S, d_model) | None, *, key_padding_mask,
    memory_key_padding_mask, caches: list[KVCache] | None) -> (B, L, d_model)``; causal
    self-attention throughout. ``caches`` holds one :class:`KVCache` per layer.
    """

    def __init__(self, n_layers: int, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0,
                 activation: str = "relu", norm_first: bool = False, cross_attention: bool = True,
                 bias: bool = True) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            DecoderBlock(d_model, n_heads, d_ff, dropout, activation, norm_first, cross_attention, bias)
            for _ in range(n_layers)
        )
        self.norm = nn.LayerNorm(d_model, bias=bias) if norm_first else None

    def forward(self, x: Tensor, memory: Tensor | None = None, *, key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, caches: list[KVCache] | None = None) -> Tensor:
        """``x: (B, L, d_model)``, ``memory: (B, S, d_model)`` -> ``(B, L, d_model)``.

        Raises ``ValueError`` if ``caches`` does not hold one cache per layer; otherwise as
        :class:`DecoderBlock`.
        """
        if caches is not None and len(caches) != len(self.layers):
            raise ValueError(f"need one KVCache per layer: {len(self.layers)} layers, got {len(caches)} caches.")
        for i, layer in enumerate(self.layers):
            x = layer(x, memory, key_padding_mask=key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                      cache=None if caches is None else caches[i])  # (B, L, d_model)
        return x if self.norm is None else self.norm(x)


@dataclass(frozen=True)
class TransformerConfig:
    """Hyperparameters of :class:`Transformer`; defaults are the paper's base model (Table 3).

    Validated on creation (``ValueError`` with the offending field).
    """

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 512
    n_heads: int = 8  # d_k = d_model // n_heads
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    d_ff: int = 2048
    dropout: float = 0.1  # P_drop, §5.4
    activation: str = "relu"
    norm_first: bool = False  # False: post-LN as in the paper; True: pre-LN
    max_len: int = 5000  # rows of the sinusoidal table
    share_embeddings: bool = False  # one embedding for source and target (needs equal vocabularies)
    tie_output: bool = True  # output projection reuses the target embedding matrix (§3.4)
    bias: bool = True

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "d_ff", "max_len"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"TransformerConfig.{name} must be a positive int, got {getattr(self, name)!r}.")
        if self.d_model % self.n_heads:
            raise ValueError(f"TransformerConfig: d_model={self.d_model} must be divisible by n_heads={self.n_heads}.")
        if self.d_model % 2:
            raise ValueError(f"TransformerConfig: d_model={self.d_model} must be even for sinusoidal positions.")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"TransformerConfig.dropout must be in [0, 1), got {self.dropout}.")
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                f"share_embeddings needs one shared vocabulary, got src_vocab_size={self.src_vocab_size} "
                f"and tgt_vocab_size={self.tgt_vocab_size}."
            )


class Transformer(nn.Module):
    """Encoder-decoder Transformer (Vaswani et al. 2017, Figure 1).

    ``forward(src: (B, S) long, tgt: (B, L) long, *, src_key_padding_mask: (B, S) bool,
    tgt_key_padding_mask: (B, L) bool) -> logits (B, L, tgt_vocab_size)``. With teacher
    forcing, ``tgt`` is the target shifted right (starts with BOS) and the logits at
    position i predict target token i.

    Parameter count of the base config with a shared 37000-token vocabulary: 63.1M (the
    paper's Table 3 says 65M; the paper gives the vocabulary only as "about 37000" tokens and
    does not say what it counted -- ~40.7k tokens would close the gap). Big: 214M vs 213M.
    Count without allocating by building on the meta device (see :mod:`attnlab.nn.params`).
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        c = self.config = config
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = self.src_embed if c.share_embeddings else nn.Embedding(c.tgt_vocab_size, c.d_model)
        self.pos = SinusoidalPositionalEncoding(c.d_model, c.max_len)
        self.dropout = nn.Dropout(c.dropout)
        self.encoder = Encoder(c.n_encoder_layers, c.d_model, c.n_heads, c.d_ff, c.dropout, c.activation,
                               c.norm_first, c.bias)
        self.decoder = Decoder(c.n_decoder_layers, c.d_model, c.n_heads, c.d_ff, c.dropout, c.activation,
                               c.norm_first, True, c.bias)
        self.out_proj = nn.Linear(c.d_model, c.tgt_vocab_size, bias=False)
        if c.tie_output:
            self.out_proj.weight = self.tgt_embed.weight  # (V, d_model), one shared matrix
        self.apply(self._init_weights)

    def _init_weights(self, module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.xavier_uniform_(module.weight)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):  # scaled by √d_model in _embed, so start at 1/√d_model
            nn.init.normal_(module.weight, std=module.embedding_dim ** -0.5)

    def _embed(self, tokens: Tensor, table: nn.Embedding, name: str) -> Tensor:
        check_rank(tokens, name, 2, "(B, length) of token ids")
        x = table(tokens) * math.sqrt(self.config.d_model)  # (B, T, d_model), §3.4
        return self.dropout(self.pos(x))  # embeddings + positions, then dropout (§5.4)

    def encode(self, src: Tensor, *, src_key_padding_mask: Tensor | None = None) -> Tensor:
        """``src: (B, S)`` token ids -> memory ``(B, S, d_model)``."""
        return self.encoder(self._embed(src, self.src_embed, "src"), key_padding_mask=src_key_padding_mask)

    def decode(self, tgt: Tensor, memory: Tensor, *, tgt_key_padding_mask: Tensor | None = None,
               memory_key_padding_mask: Tensor | None = None) -> Tensor:
        """``tgt: (B, L)`` token ids, ``memory: (B, S, d_model)`` -> logits ``(B, L, V_tgt)``."""
        y = self.decoder(self._embed(tgt, self.tgt_embed, "tgt"), memory, key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask)  # (B, L, d_model)
        return self.out_proj(y)  # (B, L, V_tgt)

    def forward(self, src: Tensor, tgt: Tensor, *, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None) -> Tensor:
        """``src: (B, S)``, ``tgt: (B, L)`` integer ids -> logits ``(B, L, tgt_vocab_size)``.

        Padding masks are bool, True = real token; the source mask is used by the encoder's
        self-attention and the decoder's cross-attention. Raises ``ValueError`` for ids that
        are not 2-D or masks of the wrong shape (see :class:`MultiHeadAttention`).
        """
        memory = self.encode(src, src_key_padding_mask=src_key_padding_mask)  # (B, S, d_model)
        return self.decode(tgt, memory, tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=src_key_padding_mask)

    @torch.no_grad()
    def greedy_decode(self, src: Tensor, bos_id: int, max_len: int, eos_id: int | None = None, *,
                      src_key_padding_mask: Tensor | None = None) -> Tensor:
        """Greedy decoding: ``src: (B, S)`` -> ``(B, <= max_len + 1)`` target ids starting with BOS.

        Re-runs the decoder on the whole prefix each step (simple, O(L²) work); stops early
        when every sequence has produced ``eos_id``. A sequence that has finished keeps
        emitting ``eos_id`` (acts as padding) while the others continue. Runs in eval mode.
        """
        was_training = self.training
        self.eval()
        memory = self.encode(src, src_key_padding_mask=src_key_padding_mask)  # (B, S, d_model)
        ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)  # (B, 1)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        for _ in range(max_len):
            logits = self.decode(ys, memory, memory_key_padding_mask=src_key_padding_mask)  # (B, t, V)
            nxt = logits[:, -1].argmax(dim=-1)  # (B,)
            if eos_id is not None:
                nxt = nxt.masked_fill(done, eos_id)  # finished rows: keep padding with EOS
                done |= nxt == eos_id
            ys = torch.cat([ys, nxt[:, None]], dim=1)  # (B, t + 1)
            if eos_id is not None and bool(done.all()):
                break
        self.train(was_training)
        return ys
