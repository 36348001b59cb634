# breaks: test_sdpa
# mistake: inverted_mask
# %% cell: sdpa
def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):
    """Attention."""
    s = attention_scores(q, k)
    if mask is not None:
        s = s.masked_fill(mask, -1e9)
    w = softmax(s, dim=-1)
    return w @ v, w
