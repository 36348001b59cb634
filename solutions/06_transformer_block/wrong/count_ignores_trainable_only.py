# breaks: test_count_parameters
# mistake: count_ignores_trainable_only
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Count."""
    return sum(p.numel() for p in module.parameters())
