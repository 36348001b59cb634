# sdpa with an additive -inf mask built by torch.where and an in-place masked_fill_; F.dropout for dropout_p.
# %% cell: sdpa
def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):
    """Additive mask."""
    scores = attention_scores(q, k)
    if mask is not None:
        bias = torch.where(mask, 0.0, float("-inf")).to(scores.dtype)
        scores = scores + bias
    weights = torch.softmax(scores, dim=-1)
    dropped = F.dropout(weights, p=dropout_p, training=dropout_p > 0)
    return dropped @ v, weights
