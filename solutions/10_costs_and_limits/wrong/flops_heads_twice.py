# breaks: test_mha_flops
# mistake: kv_times_heads
# %% cell: mha_flops
def mha_flops(B, L, S, d_model, n_heads):
    """FLOPs."""
    d_k = d_model // n_heads
    return 4 * B * L * d_model**2 + 4 * B * S * d_model**2 + 4 * B * L * S * d_model * n_heads
