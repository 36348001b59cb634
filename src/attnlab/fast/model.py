"""The GPT tuned for speed: :class:`FastGPT`, the same model as :class:`attnlab.nn.GPT`.

A :class:`FastGPT` computes what ``attnlab.nn.GPT`` computes from the same weights (forward,
backward, KV-cache decoding; ``tests/nn/test_fast_equivalence.py``), with three differences of
speed only:

* its blocks (:class:`FastBlock`) hold W_Q, W_K, W_V as one packed ``qkv`` matrix
  (:class:`~attnlab.fast.attention.FastSelfAttention`);
* the attention is always torch's fused kernel, with float32 attention under CPU autocast;
* :meth:`FastGPT.generate` gathers every layer's weights once into a :class:`BlockPlan` and feeds
  each new token through the blocks as plain function calls (at one token per call a small
  model's step is mostly per-call overhead).

Weights travel between the two with :mod:`attnlab.fast.convert` (``to_fast``, ``to_reference``).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.nn.blocks import DecoderBlock
from attnlab.nn.ffn import FeedForward
from attnlab.nn.gpt import GPT, GPTConfig
from attnlab.nn.kv_cache import KVCache

from .attention import AttentionPlan, FastSelfAttention

__all__ = ["FastBlock", "FastGPT", "BlockPlan"]


def _dropout(module: nn.Dropout, x: Tensor) -> Tensor:
    """``module(x)``, skipped where it is the identity (evaluation, or p = 0): the same result
    without the module call, which shows in a small model's step."""
    return module(x) if module.training and module.p > 0 else x


class BlockPlan(NamedTuple):
    """What :meth:`FastBlock.decode_step` reads, gathered once per generation."""

    norm_first: bool
    attention: AttentionPlan
    norm1: tuple  # F.layer_norm's (normalized_shape, weight, bias, eps)
    norm3: tuple
    w_1: Tensor  # (d_ff, d_model)
    b_1: Tensor | None
    activation: Callable[[Tensor], Tensor]
    w_2: Tensor  # (d_model, d_ff)
    b_2: Tensor | None


class FastBlock(nn.Module):
    """A GPT block (causal self-attention + FFN, pre- or post-LN): the fast twin of
    ``attnlab.nn.DecoderBlock(..., cross_attention=False)``, with its submodule names.

    Args: as :class:`attnlab.nn.DecoderBlock` (no ``cross_attention``).
    Submodules: ``self_attn`` (:class:`FastSelfAttention`), ``ffn``, ``norm1``, ``norm3``,
    ``dropout1``, ``dropout3``.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, activation: str = "relu",
                 norm_first: bool = False, bias: bool = True, layer_norm_eps: float = 1e-5) -> None:
        super().__init__()
        self.d_model, self.norm_first = d_model, norm_first
        self.self_attn = FastSelfAttention(d_model, n_heads, bias=bias, dropout=dropout)
        self.ffn = FeedForward(d_model, d_ff, activation=activation, bias=bias)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1, self.dropout3 = nn.Dropout(dropout), nn.Dropout(dropout)

    def forward(self, x: Tensor, *, attn_mask: Tensor | None = None, key_padding_mask: Tensor | None = None,
                is_causal: bool = True, cache: KVCache | None = None) -> Tensor:
        """``x: (B, L, d_model) -> (B, L, d_model)``; arguments as :meth:`attnlab.nn.DecoderBlock.forward`."""
        sa = dict(attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal, cache=cache)
        if self.norm_first:  # pre-LN: x + f(LN(x))
            x = x + _dropout(self.dropout1, self.self_attn(self.norm1(x), **sa)[0])
            return x + _dropout(self.dropout3, self._ffn(self.norm3(x)))
        x = self.norm1(x + _dropout(self.dropout1, self.self_attn(x, **sa)[0]))  # post-LN: LN(x + f(x))
        return self.norm3(x + _dropout(self.dropout3, self._ffn(x)))

    def _ffn(self, x: Tensor) -> Tensor:
        """``self.ffn(x)`` without its checks (the model checked its input): ``(B, L, d) -> (B, L, d)``."""
        f = self.ffn
        return f.w_2(_dropout(f.dropout, f.act(f.w_1(x))))  # (B, L, d_ff) inside

    def plan(self) -> BlockPlan:
        """This block's weights and settings for :meth:`decode_step`."""
        f, n1, n3 = self.ffn, self.norm1, self.norm3
        return BlockPlan(self.norm_first, self.self_attn.plan(),
                         (n1.normalized_shape, n1.weight, n1.bias, n1.eps),
                         (n3.normalized_shape, n3.weight, n3.bias, n3.eps),
                         f.w_1.weight, f.w_1.bias, f.act, f.w_2.weight, f.w_2.bias)

    @staticmethod
    def decode_step(x: Tensor, cache: KVCache, plan: BlockPlan) -> Tensor:
        """``forward(x, cache=cache)`` for ONE new position ``x: (B, 1, d_model)`` in evaluation
        mode without gradients, as plain function calls on ``plan`` (no module hooks fire)."""
        norm_first, attn, ln1, ln3, w_1, b_1, act, w_2, b_2 = plan
        step = FastSelfAttention.decode_step
        if norm_first:  # pre-LN: x + f(LN(x))
            x = x + step(F.layer_norm(x, *ln1), cache, attn)
            return x + F.linear(act(F.linear(F.layer_norm(x, *ln3), w_1, b_1)), w_2, b_2)
        x = F.layer_norm(x + step(x, cache, attn), *ln1)  # post-LN: LN(x + f(x))
        return F.layer_norm(x + F.linear(act(F.linear(x, w_1, b_1)), w_2, b_2), *ln3)


class FastGPT(GPT):
    """:class:`attnlab.nn.GPT` with :class:`FastBlock` blocks: the same model, computed faster.

    ``FastGPT(config)`` draws the same initial weights as ``GPT(config)`` from the same seed (it
    builds the reference and converts its blocks). Its ``state_dict`` differs from the
    reference's only in the packed ``blocks.{i}.self_attn.qkv.*`` keys
    (:func:`attnlab.fast.convert.fast_state_dict` maps them). ``config.fused_attention`` is
    ignored: the attention is always the fused kernel (the same numbers).

    Everything else -- arguments (``idx: (B, L)`` token ids -> ``logits (B, L, V)``), checks,
    errors (``ValueError``/``TypeError`` as :meth:`attnlab.nn.GPT.forward` raises them), sampling,
    caches -- is :class:`attnlab.nn.GPT`'s (Radford et al. 2019).
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__(config)
        c = config
        fast_blocks = [
            FastBlock(c.d_model, c.n_heads, c.ff_width, c.dropout, activation="gelu", norm_first=c.norm_first,
                      bias=c.bias)
            for _ in range(c.n_layers)
        ]
        fast = nn.ModuleList(fast_blocks)
        from .state_dict import fast_state_dict

        fast.load_state_dict(fast_state_dict(self.blocks.state_dict()))  # GPT-2's initial weights, packed
        reference = self.blocks[0]
        assert isinstance(reference, DecoderBlock)  # GPT.__init__ builds DecoderBlocks
        rotary = reference.self_attn.rotary
        for block in fast_blocks:
            block.self_attn.rotary = rotary
        self.blocks = fast
        self._plans: list[BlockPlan] | None = None  # each block's plan, during generate only

    def _block_plans(self) -> list[BlockPlan]:
        """Every block's :meth:`FastBlock.plan`, in order."""
        plans = []
        for block in self.blocks:
            assert isinstance(block, FastBlock)  # __init__ replaced the reference blocks with FastBlocks
            plans.append(block.plan())
        return plans

    def forward(self, idx: Tensor, targets: Tensor | None = None, *,
                caches: list[KVCache] | None = None) -> tuple[Tensor, Tensor | None]:
        """As :meth:`attnlab.nn.GPT.forward`. One new token (``L == 1``) with caches, in evaluation
        mode without gradients, takes :meth:`FastBlock.decode_step` (forward hooks on the blocks
        and their sublayers do not fire there; hooks on the model do)."""
        if caches is None or idx.shape[-1] != 1 or targets is not None or self.training or torch.is_grad_enabled():
            return super().forward(idx, targets, caches=caches)
        offset = self._check_inputs(idx, caches)
        x = self.tok_emb(idx)  # (B, 1, d_model)
        if self.pos_emb is not None:
            x = self.pos_emb(x, offset=offset)
        plans = self._plans or self._block_plans()  # gathered once per generate
        for cache, plan in zip(caches, plans, strict=True):
            x = FastBlock.decode_step(x, cache, plan)  # (B, 1, d_model)
        return self.lm_head(self.norm_f(x)), None  # (B, 1, V)

    def generate(self, idx: Tensor, max_new_tokens: int, *args, **kwargs):
        """As :meth:`attnlab.nn.GPT.generate` (the same tokens), with every block's weights
        looked up once for the whole generation."""
        self._plans = self._block_plans()
        try:
            return super().generate(idx, max_new_tokens, *args, **kwargs)
        finally:
            self._plans = None
