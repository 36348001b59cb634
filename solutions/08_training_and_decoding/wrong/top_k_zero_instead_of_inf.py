# breaks: test_top_k_filter
# mistake: mask_fill_zero
# %% cell: top_k_filter
def top_k_filter(logits, k):
    """Top-k."""
    kth = logits.topk(min(k, logits.shape[-1]), dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, 0.0)
