# count_parameters over a set of named_parameters with math.prod; count_block_parameters as a sum of per-layer counts.
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Unique tensors through a set and named_parameters."""
    if not isinstance(module, nn.Module):
        raise TypeError("need an nn.Module")
    params = {p for _, p in module.named_parameters()}
    return int(sum(math.prod(p.shape) for p in params if not trainable_only or p.requires_grad))
# %% cell: count_block_parameters
def count_block_parameters(d_model, n_heads, d_ff, bias=True):
    """Per-layer sums."""
    lin = lambda i, o: i * o + (o if bias else 0)
    ln = d_model * (2 if bias else 1)
    return 4 * lin(d_model, d_model) + lin(d_model, d_ff) + lin(d_ff, d_model) + 2 * ln
