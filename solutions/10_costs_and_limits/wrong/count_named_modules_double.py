# breaks: test_count_parameters
# mistake: tied_head_counted_twice
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Count."""
    return sum(p.numel() for m in module.modules() for p in m.parameters(recurse=False) if p.requires_grad or not trainable_only)
