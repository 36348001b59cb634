# breaks: test_count_parameters
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Count."""
    return sum(t.numel() for t in module.state_dict().values())
