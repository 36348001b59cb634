# breaks: test_top_k_filter
# mistake: filter_fill_wrong_sign
# Dropped logits set to NaN.
# %% patch: top_k_filter
# - return logits.masked_fill(logits < kth, float("-inf"))
# + return logits.masked_fill(logits < kth, float("nan"))
