"""``attnlab.nn``: the course's reference Transformer, one concept per module.

======================  ==========================================================
module                  contents
======================  ==========================================================
``attention``           :func:`scaled_dot_product_attention` (Vaswani et al. 2017, Eq. 1)
``masks``               :func:`causal_mask`, :func:`padding_mask`, :func:`combine_masks`
``mha``                 :func:`split_heads`, :func:`merge_heads`, :func:`attention_mask`,
                        :class:`MultiHeadAttention` (§3.2.2)
``kv_cache``            :class:`KVCache` for incremental decoding
``positional``          sinusoidal (§3.5), learned (GPT-2) and rotary (RoFormer) positions
``ffn``                 :class:`FeedForward` (§3.3)
``blocks``              :class:`EncoderBlock`, :class:`DecoderBlock` (pre-/post-LN)
``models``              :class:`Encoder`, :class:`Decoder`, :class:`Transformer`
``gpt``                 :class:`GPTConfig`, :class:`GPT` (decoder-only, GPT-2 layout)
``sampling``            temperature, top-k, top-p (nucleus), greedy, beam search
``params``              :func:`count_parameters`
======================  ==========================================================

Shapes use the legend in :mod:`attnlab`; masks are bool with True = may attend. Each module
has one forward path, written to be read; :mod:`attnlab.fast` computes the same GPT faster
(training and the benchmarks use it) and is tested equal to this one.
"""

from .attention import scaled_dot_product_attention
from .blocks import DecoderBlock, EncoderBlock
from .ffn import FeedForward
from .gpt import GPT, GPTConfig
from .masks import causal_mask, combine_masks, padding_mask
from .mha import KVCache, MultiHeadAttention, attention_mask, merge_heads, split_heads
from .models import Decoder, Encoder, Transformer, TransformerConfig
from .params import count_parameters
from .positional import (
    LearnedPositionalEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    relative_shift_matrix,
    sinusoidal_encoding,
)
from .sampling import Hypothesis, apply_temperature, beam_search, sample_next_token, top_k_filter, top_p_filter

__all__ = [
    "scaled_dot_product_attention",
    "causal_mask", "padding_mask", "combine_masks",
    "split_heads", "merge_heads", "attention_mask", "KVCache", "MultiHeadAttention",
    "sinusoidal_encoding", "relative_shift_matrix", "SinusoidalPositionalEncoding",
    "LearnedPositionalEmbedding", "RotaryEmbedding",
    "FeedForward", "EncoderBlock", "DecoderBlock",
    "Encoder", "Decoder", "Transformer", "TransformerConfig",
    "GPT", "GPTConfig",
    "apply_temperature", "top_k_filter", "top_p_filter", "sample_next_token", "beam_search", "Hypothesis",
    "count_parameters",
]
