# breaks: test_block_forward
# mistake: ln_on_sublayer_output
# %% cell: block_forward
def block_forward(x, self_attn, ffn, norm1, norm2, norm_first):
    """Block."""
    if norm_first:
        h = x + self_attn(norm1(x))[0]
        return h + ffn(norm2(h))
    h = x + norm1(self_attn(x)[0])
    return h + norm2(ffn(h))
