# breaks: test_mha_flops
# mistake: flops_forget_factor_two
# %% cell: mha_flops
def mha_flops(B, L, S, d_model, n_heads):
    """FLOPs."""
    d_k = d_model // n_heads
    return 2 * B * L * d_model**2 + 2 * B * S * d_model**2 + 2 * B * L * S * d_model
