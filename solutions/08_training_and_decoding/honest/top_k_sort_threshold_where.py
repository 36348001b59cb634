# top_k_filter thresholding at the k-th sorted value with torch.where.
# %% cell: top_k_filter
def top_k_filter(logits, k):
    """Keeps every logit at least as large as the k-th largest, via sort."""
    if k < 1:
        raise ValueError("k >= 1")
    V = logits.shape[-1]
    srt = torch.sort(logits, dim=-1, descending=True).values
    thresh = srt[..., min(k, V) - 1].unsqueeze(-1)
    return torch.where(logits >= thresh, logits, torch.full_like(logits, -math.inf))
