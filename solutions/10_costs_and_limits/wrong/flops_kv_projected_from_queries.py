# breaks: test_mha_flops
# mistake: keys_length_from_queries
# mha_flops with the K and V projections counted on the L query tokens.
# %% cell: mha_flops
def mha_flops(B, L, S, d_model, n_heads):
    """Every projection on the queries."""
    return B * (8 * L * d_model * d_model + 4 * L * S * d_model)
