# breaks: test_top_k_filter
# mistake: top_k_drops_ties
# Keeps exactly the k indices topk returns: of logits tied with the k-th, only some survive.
# %% cell: top_k_filter
def top_k_filter(logits, k):
    """Scatter the top-k indices."""
    k = min(k, logits.shape[-1])
    keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, logits.topk(k, dim=-1).indices, True)
    return logits.masked_fill(~keep, float("-inf"))
