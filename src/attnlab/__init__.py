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

Subpackages: ``attnlab.nn`` (the reference implementation), ``attnlab.practice`` (skills,
variants, diagnosis, mastery and gates), plus ``attnlab.data`` (tokenizer and the shipped
Tiny Shakespeare text).
"""

__version__ = "0.1.0"
