# breaks: test_top_k_filter
# %% cell: top_k_filter
def top_k_filter(logits: Tensor, k: int) -> Tensor:
    """Drops everything at or below the first dropped logit: index k of the sorted row, which does
    not exist when k >= V (nothing is to be dropped)."""
    if logits.dim() == 0 or k < 1:
        raise ValueError(f"need logits (..., V) and k >= 1, got shape {tuple(logits.shape)} and k={k}")
    first_dropped = logits.sort(dim=-1, descending=True).values[..., k:k + 1]  # (..., 1), empty when k >= V
    return logits.masked_fill(logits <= first_dropped, float("-inf"))
