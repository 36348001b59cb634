# breaks: test_kv_cache_bytes
# mistake: kv_forget_factor_two
# %% cell: kv_cache_bytes
def kv_cache_bytes(n_layers, B, t, d_model, bytes_per):
    """Bytes."""
    return n_layers * B * t * d_model * bytes_per
