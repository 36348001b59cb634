# sdpa computed in float64 inside, masked with finfo.min, cast back to the input dtype.
# %% cell: sdpa
def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):
    """Attention in float64 inside."""
    q64, k64, v64 = q.double(), k.double(), v.double()
    scores = attention_scores(q64, k64)
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), torch.finfo(scores.dtype).min)
    weights = softmax(scores, dim=-1)
    return (weights @ v64).to(q.dtype), weights.to(q.dtype)
