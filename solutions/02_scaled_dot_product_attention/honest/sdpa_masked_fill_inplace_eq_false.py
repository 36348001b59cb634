# sdpa masking in place with mask == False and the dtype's lowest value; dropout with bernoulli.
# %% cell: sdpa
def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0):
    """In place."""
    scores = attention_scores(q, k).clone()
    if mask is not None:
        scores.masked_fill_(mask == False, torch.finfo(scores.dtype).min)  # noqa: E712
    weights = softmax(scores, dim=-1)
    used = weights
    if dropout_p:
        used = weights * torch.bernoulli(torch.full_like(weights, 1 - dropout_p)) / (1 - dropout_p)
    return used @ v, weights
