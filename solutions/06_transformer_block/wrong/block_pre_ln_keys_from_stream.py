# breaks: test_block_forward
# mistake: pre_ln_keys_not_normalised
# Pre-LN attention reads LN(x) as the query only; keys and values come from the raw stream x.
# %% cell: block_forward
def block_forward(x, self_attn, ffn, norm1, norm2, norm_first):
    """Queries normalised, keys and values from the raw stream."""
    if norm_first:
        h = x + self_attn(norm1(x), x, x)[0]
        return h + ffn(norm2(h))
    h = norm1(x + self_attn(x)[0])
    return norm2(h + ffn(h))
