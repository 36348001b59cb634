# breaks: test_top_p_filter
# Sign slip: tokens outside the nucleus set to +inf.
# %% patch: top_p_filter
# - return logits.masked_fill(drop, float("-inf"))
# + return logits.masked_fill(drop, float("inf"))
