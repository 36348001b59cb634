# breaks: test_count_block_parameters
# mistake: forget_layernorm_params
# %% cell: count_block_parameters
def count_block_parameters(d_model, n_heads, d_ff, bias=True):
    """Block count."""
    d, b = d_model, int(bias)
    return 4 * d * d + 4 * d * b + 2 * d * d_ff + (d_ff + d) * b
