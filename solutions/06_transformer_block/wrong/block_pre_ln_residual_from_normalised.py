# breaks: test_block_forward
# mistake: residual_adds_normalised_input
# %% cell: block_forward
def block_forward(x, self_attn, ffn, norm1, norm2, norm_first):
    """Block."""
    if norm_first:
        x = norm1(x)
        h = x + self_attn(x)[0]
        h = norm2(h)
        return h + ffn(h)
    h = norm1(x + self_attn(x)[0])
    return norm2(h + ffn(h))
