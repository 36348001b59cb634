# breaks: test_mha_flops
# mistake: forget_batch
# mha_flops for one sequence (no factor B).
# %% cell: mha_flops
def mha_flops(B, L, S, d_model, n_heads):
    """Per sequence."""
    return 4 * L * d_model * d_model + 4 * S * d_model * d_model + 4 * L * S * d_model
