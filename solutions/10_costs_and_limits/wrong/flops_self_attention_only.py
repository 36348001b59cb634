# breaks: test_mha_flops
# mistake: keys_length_from_queries
# %% cell: mha_flops
def mha_flops(B, L, S, d_model, n_heads):
    """FLOPs."""
    d_k = d_model // n_heads
    return 8 * B * L * d_model**2 + 4 * B * L * L * d_model
