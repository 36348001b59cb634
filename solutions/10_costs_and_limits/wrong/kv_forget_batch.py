# breaks: test_kv_cache_bytes
# mistake: forget_batch
# kv_cache_bytes for one sequence (no factor B).
# %% cell: kv_cache_bytes
def kv_cache_bytes(n_layers, B, t, d_model, bytes_per):
    """Per sequence."""
    return 2 * n_layers * t * d_model * bytes_per
