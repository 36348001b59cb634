# Costs with math.prod, integer arithmetic in another order; by-hand integers as strings with separators.
# %% cell: attention_score_bytes
def attention_score_bytes(B, H, L, dtype_bytes):
    """Product of the shape and the element size."""
    return math.prod((B, H, L, L)) * dtype_bytes
# %% cell: kv_cache_bytes
def kv_cache_bytes(n_layers, B, t, d_model, bytes_per):
    """Keys and values per layer."""
    per_layer = B * t * d_model * bytes_per
    return n_layers * (per_layer + per_layer)
# %% cell: mha_flops
def mha_flops(B, L, S, d_model, n_heads):
    """Projections plus the two attention products."""
    d_k = d_model // n_heads
    proj = 4 * d_model * d_model * (B * L + B * S)
    attn = 4 * B * n_heads * L * S * d_k
    return proj + attn
# %% cell: flops_by_hand
flops: int = int("{answer}")
