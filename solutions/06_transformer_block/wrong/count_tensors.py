# breaks: test_count_parameters
# mistake: count_tensors_not_scalars
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Count."""
    return len([p for p in module.parameters() if p.requires_grad or not trainable_only])
