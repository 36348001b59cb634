# breaks: test_sdpa
# mistake: mask_fill_zero
# Blocked logits set to 0 instead of -inf: they still get weight exp(0) / sum.
# %% patch: sdpa
# - scores = scores.masked_fill(~mask, float("-inf"))
# + scores = scores.masked_fill(~mask, 0.0)
