# breaks: test_combine_masks
# mistake: combine_with_or
# %% cell: combine_masks
def combine_masks(*masks):
    """OR."""
    result = None
    for m in masks:
        if m is not None:
            result = m if result is None else result | m
    return result
