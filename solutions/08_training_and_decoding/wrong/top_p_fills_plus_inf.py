# breaks: test_top_p_filter
# mistake: filter_fill_wrong_sign
# Sign slip: tokens outside the nucleus set to +inf.
# %% patch: top_p_filter
# - return logits.masked_fill(drop, float("-inf"))
# + return logits.masked_fill(drop, float("inf"))
