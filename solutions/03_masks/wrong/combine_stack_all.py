# breaks: test_combine_masks
# mistake: missing_broadcast_axes
# torch.stack needs masks of one shape: (L, S) with (B, 1, S) fails.
# %% cell: combine_masks
def combine_masks(*masks):
    """stack + all."""
    given = [m for m in masks if m is not None]
    if not given:
        return None
    return torch.stack(given).all(dim=0)
