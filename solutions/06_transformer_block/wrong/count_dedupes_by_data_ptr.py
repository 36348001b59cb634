# breaks: test_count_parameters
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Unique parameters by storage address (every address is 0 on the meta device)."""
    if not isinstance(module, nn.Module):
        raise TypeError("count_parameters needs an nn.Module")
    seen, total = set(), 0
    for p in module.parameters():
        if p.data_ptr() in seen or (trainable_only and not p.requires_grad):
            continue
        seen.add(p.data_ptr())
        total += p.numel()
    return total
