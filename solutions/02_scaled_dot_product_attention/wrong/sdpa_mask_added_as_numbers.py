# breaks: test_sdpa
# mistake: mask_fill_not_neg_inf
# The bool mask added to the logits (True = +1) instead of blocking with -inf.
# %% patch: sdpa
# - scores = scores.masked_fill(~mask, float("-inf"))
# + scores = scores + mask
