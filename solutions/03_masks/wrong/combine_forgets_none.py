# breaks: test_combine_masks
# mistake: combine_none_not_skipped
# %% cell: combine_masks
def combine_masks(*masks):
    """Fails on None."""
    result = masks[0]
    for m in masks[1:]:
        result = result & m
    return result
