# breaks: test_split_heads, test_mha_forward
# mistake: heads_interleaved
# %% cell: split_heads
def split_heads(x, n_heads):
    """Split."""
    B, L, d_model = x.shape
    return x.reshape(B, L, d_model // n_heads, n_heads).permute(0, 3, 1, 2)
