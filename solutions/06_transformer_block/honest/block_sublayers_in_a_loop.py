# block_forward as one loop over the two (sublayer, norm) pairs, both norm orders in one expression.
# %% cell: block_forward
def block_forward(x, self_attn, ffn, norm1, norm2, norm_first):
    """Sublayers in a loop."""
    attn = lambda t: self_attn(t)[0]
    for f, norm in ((attn, norm1), (ffn, norm2)):
        x = x + f(norm(x)) if norm_first else norm(x + f(x))
    return x
