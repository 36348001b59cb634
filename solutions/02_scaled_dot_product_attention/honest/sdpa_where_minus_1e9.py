# sdpa with torch.where and -1e9 for blocked keys; plain names.
# %% cell: sdpa
def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):
    """Attention with torch.where."""
    scores = attention_scores(q, k)
    if mask is not None:
        scores = torch.where(mask, scores, torch.full_like(scores, -1e9))
    weights = softmax(scores, dim=-1)
    return torch.matmul(weights, v), weights
