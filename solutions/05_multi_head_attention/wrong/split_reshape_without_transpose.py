# breaks: test_split_heads, test_mha_forward
# mistake: reshape_without_transpose
# %% cell: split_heads
def split_heads(x, n_heads):
    """Split."""
    B, L, d_model = x.shape
    return x.reshape(B, n_heads, L, d_model // n_heads)
