# breaks: test_top_k_filter
# mistake: top_k_not_clamped
# %% cell: top_k_filter
def top_k_filter(logits, k):
    """Top-k."""
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float('-inf'))
