# shift_targets with torch.roll for the targets.
# %% patch: shift_targets
# - return idx[:, :-1], idx[:, 1:]  # (B, T) inputs, (B, T) targets = inputs shifted left by one
# + return idx[:, :-1], torch.roll(idx, -1, dims=1)[:, :-1] if idx.shape[0] > 1 else idx[:, 1:]
