# count_parameters from named_parameters (which lists tied tensors once).
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Sum over named parameters."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"expected an nn.Module, got {type(module).__name__}")
    return sum(p.numel() for _, p in module.named_parameters() if p.requires_grad or not trainable_only)
# %% cell: memory_by_hand
weight_bytes = "{answer}"
