"""attnlab: an interactive course on attention and Transformers.

Shape legend (used in every docstring of the package):

    B       batch size
    H       number of heads (``n_heads``)
    L       query (target) sequence length
    S       key/value (source) sequence length
    d_model model width (``D``)
    d_k     per-head query/key width, ``d_model // n_heads``
    d_v     per-head value width, ``d_model // n_heads``
    d_ff    hidden width of the position-wise feed-forward network
    V       vocabulary size

Masks everywhere in attnlab are boolean with **True = may attend**, the convention of
``torch.nn.functional.scaled_dot_product_attention``. Where a library uses the opposite
rule (``torch.nn.MultiheadAttention``'s ``attn_mask``/``key_padding_mask``), the code
converts explicitly with ``~mask`` at that boundary.

Subpackages: ``attnlab.nn`` (the reference implementation, written to be read),
``attnlab.fast`` (the same GPT computed faster, and the machine's default precision and threads:
what ``attnlab.training`` uses), ``attnlab.practice`` (skills, variants, diagnosis, mastery and
gates), plus ``attnlab.data`` (tokenizer and the shipped Tiny Shakespeare text).
"""

__version__ = "0.1.0"

# Key names of attnlab.nn, re-exported lazily (PEP 562) so that ``import attnlab`` stays
# cheap (no torch import) for tools that only need attnlab.practice or the CLI.
_NN_EXPORTS = (
    "scaled_dot_product_attention", "causal_mask", "padding_mask", "combine_masks",
    "split_heads", "merge_heads", "KVCache", "MultiHeadAttention",
    "sinusoidal_encoding", "SinusoidalPositionalEncoding", "LearnedPositionalEmbedding",
    "RotaryEmbedding", "FeedForward", "EncoderBlock", "DecoderBlock", "Encoder", "Decoder",
    "Transformer", "TransformerConfig", "GPT", "GPTConfig", "top_k_filter", "top_p_filter",
    "count_parameters",
)


def _install_figure_alt() -> None:
    """Inside an IPython kernel, give every matplotlib figure shown a text alternative
    (:mod:`attnlab.figure_alt`); elsewhere do nothing (IPython is not imported)."""
    import sys

    if "IPython" in sys.modules:
        from .figure_alt import install

        install()


_install_figure_alt()


def __getattr__(name: str):
    if name in _NN_EXPORTS:
        from . import nn

        return getattr(nn, name)
    raise AttributeError(f"module 'attnlab' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_NN_EXPORTS))
