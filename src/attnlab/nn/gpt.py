"""A decoder-only language model in the style of GPT-2 (Radford et al. 2019).

Token embedding + learned positional embedding (or rotary positions inside attention) -> dropout -> ``n_layers`` pre-LN decoder
blocks without cross-attention (causal self-attention + GELU FFN) -> final LayerNorm ->
linear output layer. The output layer's weight IS the token embedding matrix ("weight
tying", Press & Wolf 2017; also Vaswani et al. 2017, §3.4): a token's input vector and its
output score vector are the same ``(V, d_model)`` row, which saves ``V * d_model`` parameters.

Training uses teacher forcing: the caller passes ``targets`` = the input shifted left by one
(``attnlab.data.get_batch`` does this), and the loss is the cross-entropy of every position's
next-token prediction. Generation uses a :class:`KVCache` per layer.

Positions: ``positional="learned"`` (GPT-2, default) adds a trained vector per absolute
position; ``positional="rotary"`` (RoFormer, Su et al. 2021 -- an extension) rotates queries and
keys instead, so attention depends only on relative distance. The difference shows past
``block_size`` in :meth:`GPT.generate`: a rotary model keeps its cache and slides it, a learned
one must recompute the window.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import check_divisible, check_rank, shape_str
from .blocks import DecoderBlock
from .mha import KVCache
from .positional import LearnedPositionalEmbedding, RotaryEmbedding
from .sampling import apply_temperature, sample_next_token


@dataclass(frozen=True)
class GPTConfig:
    """Hyperparameters of :class:`GPT`, frozen and validated (``ValueError`` names the field).

    GPT-2 small is ``GPTConfig(50257, 1024, 768, 12, 12)`` (124M parameters).
    """

    vocab_size: int
    block_size: int  # maximum context length (number of learned positions)
    d_model: int = 128
    n_heads: int = 4  # d_k = d_model // n_heads
    n_layers: int = 4
    d_ff: int | None = None  # None -> 4 * d_model, as in GPT-2
    dropout: float = 0.0  # embeddings, residual and attention-weight dropout
    bias: bool = True  # biases in Linear and LayerNorm layers, like GPT-2
    norm_first: bool = True  # pre-LN (GPT-2); False gives post-LN blocks (Vaswani et al. 2017)
    fused_attention: bool = True  # torch's fused scaled_dot_product_attention when weights are not needed
    positional: str = "learned"  # "learned" (GPT-2 absolute positions) or "rotary" (RoPE in every attention)

    def __post_init__(self) -> None:
        for name in ("vocab_size", "block_size", "d_model", "n_heads", "n_layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"GPTConfig.{name} must be a positive int, got {value!r}.")
        if self.d_ff is not None and (not isinstance(self.d_ff, int) or self.d_ff < 1):
            raise ValueError(f"GPTConfig.d_ff must be a positive int or None (= 4 * d_model), got {self.d_ff!r}.")
        check_divisible(self.d_model, self.n_heads)
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"GPTConfig.dropout must be in [0, 1), got {self.dropout}.")
        if self.positional not in ("learned", "rotary"):
            raise ValueError(f"GPTConfig.positional must be 'learned' or 'rotary', got {self.positional!r}.")
        if self.positional == "rotary" and (self.d_model // self.n_heads) % 2:
            raise ValueError(
                f"GPTConfig: rotary positions rotate feature pairs, so d_k = d_model / n_heads = "
                f"{self.d_model // self.n_heads} must be even."
            )

    @property
    def ff_width(self) -> int:
        """The FFN hidden width actually used: ``d_ff`` or ``4 * d_model``."""
        return 4 * self.d_model if self.d_ff is None else self.d_ff


class GPT(nn.Module):
    """Decoder-only Transformer language model (GPT-2 layout, Radford et al. 2019, §2.3).

    Submodules: ``tok_emb`` (``nn.Embedding(V, d_model)``), ``pos_emb``
    (:class:`LearnedPositionalEmbedding`; ``None`` with rotary positions, whose
    :class:`RotaryEmbedding` sits in every ``self_attn.rotary``), ``drop``, ``blocks`` (``DecoderBlock`` with
    ``cross_attention=False``), ``norm_f`` (final LayerNorm, pre-LN only), ``lm_head``
    (``Linear(d_model, V, bias=False)`` whose weight is ``tok_emb.weight``).

    Initialisation as GPT-2: N(0, 0.02) weights, zero biases, and the projections that write
    into the residual stream (``w_o``, ``ffn.w_2``) scaled by ``1/√(2 n_layers)``.
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        c = self.config = config
        self.tok_emb = nn.Embedding(c.vocab_size, c.d_model)
        self.pos_emb = LearnedPositionalEmbedding(c.block_size, c.d_model) if c.positional == "learned" else None
        self.drop = nn.Dropout(c.dropout)
        blocks = [
            DecoderBlock(c.d_model, c.n_heads, c.ff_width, c.dropout, activation="gelu", norm_first=c.norm_first,
                         cross_attention=False, bias=c.bias)
            for _ in range(c.n_layers)
        ]
        rotary = RotaryEmbedding(c.d_model // c.n_heads) if c.positional == "rotary" else None
        for block in blocks:
            block.self_attn.fused = c.fused_attention
            block.self_attn.rotary = rotary  # one parameter-free module shared by all layers
        self.blocks = nn.ModuleList(blocks)
        self.norm_f = nn.LayerNorm(c.d_model, bias=c.bias) if c.norm_first else nn.Identity()
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.lm_head.weight = self.tok_emb.weight  # weight tying: one (V, d_model) matrix
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("w_o.weight") or name.endswith("ffn.w_2.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / (2 * c.n_layers) ** 0.5)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx: Tensor, targets: Tensor | None = None, *,
                caches: list[KVCache] | None = None) -> tuple[Tensor, Tensor | None]:
        """Next-token logits for every position, and the loss if ``targets`` are given.

        Args:
            idx: ``(B, L)`` integer token ids, ``L <= block_size`` (counting cached tokens).
            targets: ``(B, L)`` integer next-token ids (``idx`` shifted left by one, supplied
                by the caller); entries equal to -100 are ignored in the loss.
            caches: one :class:`KVCache` per layer for incremental decoding; the positions of
                ``idx`` then start after the cached ones (``caches[0].position``). Learned
                positions need caches without ``window``; rotary ones accept a sliding cache
                (``window <= block_size``), which lets decoding run past ``block_size``.

        Returns:
            ``logits``: ``(B, L, V)`` float; ``loss``: scalar mean cross-entropy, or None.

        Raises:
            ValueError: ``idx`` not 2-D, context longer than ``block_size`` (for rotary
                positions: kept cache + L), ``targets`` of another shape, wrong number of caches,
                caches of another batch size, a sliding cache on a model with learned positions
                or with ``window > block_size``.
            TypeError: ``idx``/``targets`` not integer.
        """
        offset = self._check_inputs(idx, caches)  # absolute position of idx[:, 0]
        B, L = idx.shape
        x = self.tok_emb(idx)  # (B, L, d_model)
        if self.pos_emb is not None:
            x = self.pos_emb(x, offset=offset)  # + learned vectors of positions offset .. offset + L - 1
        x = self.drop(x)  # (B, L, d_model)
        for i, block in enumerate(self.blocks):
            x = block(x, is_causal=True, cache=None if caches is None else caches[i])  # (B, L, d_model)
        logits = self.lm_head(self.norm_f(x))  # (B, L, V)

        loss = None
        if targets is not None:
            if targets.shape != idx.shape:
                raise ValueError(
                    f"targets must have the shape of idx {shape_str(idx)} (the next token at each "
                    f"position), got {shape_str(targets)}."
                )
            if targets.dtype.is_floating_point:
                raise TypeError(f"targets must be integer token ids, got dtype {targets.dtype}.")
            loss = F.cross_entropy(logits.view(B * L, -1), targets.reshape(B * L))  # (B*L, V) vs (B*L,)
        return logits, loss

    def _check_inputs(self, idx: Tensor, caches: list[KVCache] | None) -> int:
        """Check :meth:`forward`'s ``idx: (B, L)`` and ``caches``; return the position of ``idx[:, 0]``.

        Raises: as :meth:`forward` (everything but ``targets``).
        """
        check_rank(idx, "idx", 2, "(B, L) of token ids")
        if idx.dtype.is_floating_point or idx.dtype == torch.bool:
            raise TypeError(f"idx must hold integer token ids, got dtype {idx.dtype}; use idx.long().")
        if caches is not None and len(caches) != len(self.blocks):
            raise ValueError(f"need one KVCache per layer: {len(self.blocks)} layers, got {len(caches)}.")
        B, L = idx.shape
        bs = self.config.block_size
        offset = 0 if caches is None else caches[0].position  # absolute position of idx[:, 0]
        window = None if caches is None else caches[0].window
        if window is not None and (self.pos_emb is not None or window > bs):
            raise ValueError(
                f"a sliding KVCache (window={window}) needs rotary positions and window <= block_size={bs}; "
                f"learned absolute positions cannot slide: use KVCache() and recompute the last block_size tokens."
            )
        context = offset if self.pos_emb is not None else (0 if caches is None else len(caches[0]))
        if context + L > bs and not (window is not None and L == 1):
            raise ValueError(
                f"context of {context + L} tokens (idx {shape_str(idx)}, {context} cached) exceeds "
                f"block_size={bs}; crop to the last {bs} tokens, e.g. idx[:, -block_size:]."
            )
        cached = None if caches is None else caches[0].k  # (B, H, S, d_k); None before the first update
        if cached is not None and cached.shape[2] and cached.shape[0] != B:
            raise ValueError(
                f"idx {shape_str(idx)} has batch size {B} but the caches hold batch size "
                f"{cached.shape[0]}; use fresh KVCaches (or .reset() them) for a new batch."
            )
        return offset

    def generate(self, idx: Tensor, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None,
                 top_p: float | None = None, greedy: bool = False, use_cache: bool = True,
                 generator: torch.Generator | None = None, return_logits: bool = False):
        """Autoregressively extend ``idx: (B, T)`` by ``max_new_tokens`` tokens.

        Each step takes the logits of the last position, then (unless ``greedy``) applies
        temperature, top-k and top-p (:mod:`attnlab.nn.sampling`) and samples. With
        ``use_cache`` the prompt is run once and each later step feeds only the newest token
        through the model (``self(idx[:, -1:], caches=...)``), reusing cached keys/values
        (:class:`KVCache`, pre-allocated); the result is the same as without the cache (tested)
        while the context fits ``block_size``. The loop runs under ``torch.inference_mode``.
        (:class:`attnlab.fast.FastGPT` generates the same tokens faster.)

        Past ``block_size`` the two kinds of positions differ:

        * learned (absolute) positions cannot be shifted: the cache is rebuilt from the last
          ``block_size`` tokens each step, which keeps results identical to ``use_cache=False``
          but removes the speed-up;
        * rotary positions only encode distances, so the cache slides (``KVCache(window=
          block_size)``): the oldest key is dropped and each step still feeds one token. Every
          token then attends to the last ``block_size`` tokens with their keys as computed when
          they arrived (sliding-window attention), which is *not* the same as ``use_cache=False``
          (that recomputes the window from position 0).

        Returns:
            ``(B, T + max_new_tokens)`` long; with ``return_logits`` also the step logits
            ``(B, max_new_tokens, V)`` (after temperature, before filtering).

        Raises:
            ValueError: ``idx`` not ``(B, T)`` with T >= 1, or bad sampling arguments.
        """
        check_rank(idx, "idx", 2, "(B, T) of token ids")
        if idx.shape[1] < 1:
            raise ValueError("generate needs a prompt of at least one token per row, got T=0.")
        if not greedy and not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}; for argmax decoding use greedy=True.")
        if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
            raise ValueError(f"top_k must be an int >= 1 or None, got {top_k!r}.")
        if top_p is not None and not 0.0 < top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1] or None, got {top_p}.")
        was_training = self.training
        self.eval()
        try:
            with torch.inference_mode():  # no autograd bookkeeping at all (lighter than no_grad)
                idx, step_logits = self._decode_loop(idx, max_new_tokens, temperature, top_k, top_p, greedy,
                                                     use_cache, generator, return_logits)
        finally:
            self.train(was_training)
        # clone: tensors made under inference_mode may not enter autograd later (e.g. training on them)
        return (idx.clone(), step_logits.clone()) if return_logits else idx.clone()

    def _decode_loop(self, idx, max_new_tokens, temperature, top_k, top_p, greedy, use_cache, generator,
                     return_logits):
        """The generation loop of :meth:`generate` (arguments validated; eval and inference mode).

        Returns ``(B, T + max_new_tokens)`` tokens and the ``(B, max_new_tokens, V)`` step
        logits (None unless ``return_logits``), both filled in place as the loop goes.
        """
        bs = self.config.block_size
        slide = self.pos_emb is None  # rotary positions: keep the cache and slide it
        B, T = idx.shape
        out = idx.new_empty(B, T + max_new_tokens)  # (B, T + new): filled in place, no per-step copy
        out[:, :T] = idx
        step_logits = None  # (B, max_new_tokens, V), allocated at the first step (the logits' dtype)
        caches = None
        for t in range(T, T + max_new_tokens):
            if not use_cache:
                logits, _ = self(out[:, max(0, t - bs):t])  # (B, t, V), whole window every step
            elif caches is None or (not slide and len(caches[0]) >= bs):
                caches = [KVCache(capacity=bs, window=bs if slide else None) for _ in self.blocks]
                logits, _ = self(out[:, max(0, t - bs):t], caches=caches)  # (B, t, V): (re)fill with the window
            else:
                logits, _ = self(out[:, t - 1:t], caches=caches)  # (B, 1, V): only the newest token
            last = logits[:, -1]  # (B, V)
            if not greedy and temperature != 1.0:  # dividing by 1.0 would change nothing
                last = apply_temperature(last, temperature)
            if return_logits:
                if step_logits is None:
                    step_logits = last.new_empty(B, max_new_tokens, last.shape[-1])
                step_logits[:, t - T] = last
            out[:, t] = sample_next_token(last, 1.0, top_k, top_p, greedy, generator)  # (B,)
        if return_logits and step_logits is None:  # max_new_tokens == 0
            step_logits = torch.zeros(B, 0, self.config.vocab_size, device=idx.device)
        return out, step_logits
