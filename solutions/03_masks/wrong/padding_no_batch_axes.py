# breaks: test_padding_mask
# mistake: missing_broadcast_axes
# Compares positions with lengths without adding axes: (S,) vs (B,) instead of (B, S).
# %% patch: padding_mask
# - return positions[None, :] < lengths[:, None]  # (B, S)
# + return positions < lengths
