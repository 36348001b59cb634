# breaks: test_count_parameters
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Unique parameters by storage address (every address is 0 on the meta device)."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"count_parameters expects an nn.Module, got {type(module).__name__}")
    by_address = {}
    for p in module.parameters():
        if p.requires_grad or not trainable_only:
            by_address[p.data_ptr()] = p.numel()
    return sum(by_address.values())
