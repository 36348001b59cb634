"""The skill catalogue: importing this package registers every skill (one module per topic).

=================  ======  =======================================================
module             lesson  skills
=================  ======  =======================================================
warmup             00      softmax of a 3-vector, shape of Q Kᵀ
routing            01      soft lookup weights/output, path lengths
attention          02      scores, softmax rows, A V, full SDPA, √d_k
masks              03      causal (square, rectangular S > L), padding, combined masks, masked softmax
positions          04      sinusoidal values, permutation equivariance
heads              05      shape trace, split/merge heads, MHA parameter count
blocks             06      FFN/block parameter counts, LayerNorm by hand
encdec             07      choosing masks, cross-attention shapes
decoding           08      shifted targets, perplexity, top-k, top-p, greedy, beam search
language_model     09      GPT parameter count, uniform loss, batch shapes
costs              10      KV-cache bytes, attention memory and FLOPs
concepts           01-10   conceptual items: multiple choice, multiple select, ordering
=================  ======  =======================================================
"""
from . import (  # noqa: F401
    attention, blocks, concepts, costs, decoding, encdec, heads, language_model, masks, positions, routing, warmup,
)
