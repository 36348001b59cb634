# breaks: test_count_parameters
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Count."""
    return sum(p.numel() for p in module.parameters())
