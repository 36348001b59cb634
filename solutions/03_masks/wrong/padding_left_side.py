# breaks: test_padding_mask
# mistake: padding_at_start
# Treats sequences as left-padded (real tokens at the end); the course's convention is right padding.
# %% patch: padding_mask
# - return positions[None, :] < lengths[:, None]  # (B, S)
# + return positions[None, :] >= S - lengths[:, None]
