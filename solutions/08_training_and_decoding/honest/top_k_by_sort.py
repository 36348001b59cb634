# top_k_filter from a descending sort and torch.where; top_p in float64 inside.
# %% cell: top_k_filter
def top_k_filter(logits, k):
    """k-th largest by sorting."""
    k = min(k, logits.shape[-1])
    kth = torch.sort(logits, dim=-1, descending=True).values[..., k - 1].unsqueeze(-1)
    return torch.where(logits >= kth, logits, torch.full_like(logits, float("-inf")))
# %% cell: top_p_filter
def top_p_filter(logits, p):
    """Nucleus in float64, unsorted with gather of the inverse permutation."""
    x = logits.double()
    sorted_x, order = x.sort(dim=-1, descending=True)
    probs = torch.softmax(sorted_x, dim=-1)
    drop_sorted = probs.cumsum(-1) - probs >= p
    inverse = order.argsort(dim=-1)
    drop = drop_sorted.gather(-1, inverse)
    return logits.masked_fill(drop, -math.inf)
