# breaks: test_shift_targets
# mistake: targets_shifted_backwards
# %% cell: shift_targets
def shift_targets(idx):
    """Shift."""
    return idx[:, 1:], idx[:, :-1]
