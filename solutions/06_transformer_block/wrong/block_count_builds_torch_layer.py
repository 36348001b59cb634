# breaks: test_count_block_parameters
# count_block_parameters counts torch's own TransformerEncoderLayer built on the meta device instead of the formula.
# %% cell: count_block_parameters
def count_block_parameters(d_model, n_heads, d_ff, bias=True):
    """Counted on torch's own layer, built on the meta device."""
    with torch.device("meta"):
        layer = nn.TransformerEncoderLayer(d_model, n_heads, d_ff, bias=bias)
    return sum(p.numel() for p in layer.parameters())
