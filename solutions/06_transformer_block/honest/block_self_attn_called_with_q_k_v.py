# block_forward calling self_attn(n, n, n) with query, key and value given, as the course's MultiHeadAttention allows.
# %% cell: block_forward
def block_forward(x, self_attn, ffn, norm1, norm2, norm_first):
    """Self-attention called with query, key and value given explicitly."""
    if norm_first:
        n = norm1(x)
        h = x + self_attn(n, n, n)[0]
        return h + ffn(norm2(h))
    h = norm1(x + self_attn(x, x, x)[0])
    return norm2(h + ffn(h))
