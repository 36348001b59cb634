# breaks: test_sdpa
# mistake: mask_after_softmax
# %% cell: sdpa
def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):
    """Attention."""
    w = softmax(attention_scores(q, k), dim=-1)
    if mask is not None:
        w = w.masked_fill(~mask, 0.0)
    return w @ v, w
