# split_heads with view + permute, merge_heads with permute + contiguous + view.
# %% cell: split_heads
def split_heads(x, n_heads):
    """view then permute."""
    B, L, d_model = x.shape
    return x.view(B, L, n_heads, -1).permute(0, 2, 1, 3)
# %% cell: merge_heads
def merge_heads(x):
    """permute then view."""
    B, H, L, d_k = x.shape
    return x.permute(0, 2, 1, 3).contiguous().view(B, L, -1)
