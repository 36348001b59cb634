# breaks: test_shift_targets
# mistake: target_no_shift
# %% cell: shift_targets
def shift_targets(idx):
    """Shift."""
    return idx[:, :-1], idx[:, :-1]
