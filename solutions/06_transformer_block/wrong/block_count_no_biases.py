# breaks: test_count_block_parameters
# mistake: params_without_bias
# count_block_parameters leaves out every bias (linear layers and LayerNorm beta) although bias=True.
# %% cell: count_block_parameters
def count_block_parameters(d_model, n_heads, d_ff, bias=True):
    """Weight matrices and LayerNorm gains only."""
    return 4 * d_model * d_model + 2 * d_model * d_ff + 2 * d_model
