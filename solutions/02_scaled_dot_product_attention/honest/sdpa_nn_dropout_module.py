# sdpa with an nn.Dropout module made per call, F.softmax-free; the scale via attention_scores.
# %% cell: sdpa
def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):
    """nn.Dropout."""
    scores = attention_scores(q, k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = softmax(scores, -1)
    return nn.Dropout(dropout_p)(weights) @ v, weights
