# breaks: test_merge_heads, test_mha_forward
# mistake: reshape_without_transpose
# %% cell: merge_heads
def merge_heads(x):
    """Merge."""
    B, H, L, d_k = x.shape
    return x.reshape(B, L, H * d_k)
