# breaks: test_combine_masks
# mistake: combine_drops_masks
# Combines only the first two masks that are given.
# %% cell: combine_masks
def combine_masks(*masks):
    """AND of the first two masks."""
    given = [m for m in masks if m is not None]
    if not given:
        return None
    return given[0] if len(given) == 1 else given[0] & given[1]
