# split_heads with unflatten + transpose; merge_heads with transpose + flatten; causal via a comparison of aranges.
# %% cell: split_heads
def split_heads(x, n_heads):
    """unflatten."""
    return x.unflatten(-1, (n_heads, -1)).transpose(1, 2)
# %% cell: merge_heads
def merge_heads(x):
    """flatten."""
    return x.transpose(1, 2).flatten(2)
