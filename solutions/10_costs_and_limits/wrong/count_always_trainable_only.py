# breaks: test_count_parameters
# mistake: count_ignores_trainable_only
# count_parameters always skips frozen parameters, whatever trainable_only says.
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """What the optimiser updates."""
    if not isinstance(module, nn.Module):
        raise TypeError("need an nn.Module")
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
