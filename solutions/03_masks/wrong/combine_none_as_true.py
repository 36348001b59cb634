# breaks: test_combine_masks
# mistake: combine_none_not_skipped
# Starts from True: with only None arguments it returns True instead of None.
# %% cell: combine_masks
def combine_masks(*masks):
    """Start from True."""
    out = True
    for m in masks:
        if m is not None:
            out = out & m
    return out
