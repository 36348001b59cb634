# breaks: test_sdpa
# %% cell: sdpa
def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):
    """Attention."""
    s = attention_scores(q, k)
    if mask is not None:
        s = s.masked_fill(~mask, float('-inf'))
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask), softmax(s, dim=-1)
