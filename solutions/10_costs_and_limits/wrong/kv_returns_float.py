# breaks: test_kv_cache_bytes
# %% cell: kv_cache_bytes
def kv_cache_bytes(n_layers, B, t, d_model, bytes_per):
    """Bytes."""
    return 2 * n_layers * B * t * d_model * bytes_per / 2**30
