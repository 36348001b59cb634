# breaks: test_soft_lookup
# mistake: scores_clamped
# The scores clamped to +-80 instead of subtracting the maximum: two large scores become equal.
# %% patch: soft_lookup
# - scores = scores - scores.max(dim=-1, keepdim=True).values  # stable exp
# + scores = scores.clamp(-80.0, 80.0)
