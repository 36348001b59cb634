# breaks: test_merge_heads, test_mha_forward
# mistake: heads_wrong_order
# %% cell: merge_heads
def merge_heads(x):
    """Merge."""
    B, H, L, d_k = x.shape
    return x.flip(1).transpose(1, 2).reshape(B, L, H * d_k)
