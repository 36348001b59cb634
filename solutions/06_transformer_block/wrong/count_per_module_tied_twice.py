# breaks: test_count_parameters
# mistake: tied_head_counted_twice
# count_parameters walks every module's own parameters: a tied matrix is counted under both modules.
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Walks every submodule."""
    if not isinstance(module, nn.Module):
        raise TypeError("need an nn.Module")
    total = 0
    for m in module.modules():
        for p in m.parameters(recurse=False):
            if p.requires_grad or not trainable_only:
                total += p.numel()
    return total
