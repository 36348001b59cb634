# breaks: test_top_k_filter
# mistake: top_k_plus_one
# %% cell: top_k_filter
def top_k_filter(logits, k):
    """Top-k."""
    kth = logits.topk(min(k + 1, logits.shape[-1]), dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float('-inf'))
