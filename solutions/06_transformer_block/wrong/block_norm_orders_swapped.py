# breaks: test_block_forward
# mistake: post_ln_as_pre_ln
# %% cell: block_forward
def block_forward(x, self_attn, ffn, norm1, norm2, norm_first):
    """Block."""
    if not norm_first:
        h = x + self_attn(norm1(x))[0]
        return h + ffn(norm2(h))
    h = norm1(x + self_attn(x)[0])
    return norm2(h + ffn(h))
