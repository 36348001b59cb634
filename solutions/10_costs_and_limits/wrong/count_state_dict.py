# breaks: test_count_parameters
# mistake: count_state_dict
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Count."""
    return sum(t.numel() for t in module.state_dict().values())
