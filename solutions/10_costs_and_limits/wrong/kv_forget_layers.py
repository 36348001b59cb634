# breaks: test_kv_cache_bytes
# mistake: forget_layers
# %% cell: kv_cache_bytes
def kv_cache_bytes(n_layers, B, t, d_model, bytes_per):
    """Bytes."""
    return 2 * B * t * d_model * bytes_per
