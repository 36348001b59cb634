# breaks: test_sdpa
# mistake: mask_fill_zero
# The bool mask multiplied into the scores: blocked scores become 0, not -inf.
# %% patch: sdpa
# - scores = scores.masked_fill(~mask, float("-inf"))
# + scores = scores * mask
