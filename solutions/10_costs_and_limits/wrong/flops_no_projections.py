# breaks: test_mha_flops
# mistake: flops_no_projections
# %% cell: mha_flops
def mha_flops(B, L, S, d_model, n_heads):
    """FLOPs."""
    d_k = d_model // n_heads
    return 4 * B * L * S * d_model
