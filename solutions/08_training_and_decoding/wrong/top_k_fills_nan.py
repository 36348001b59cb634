# breaks: test_top_k_filter
# Dropped logits set to NaN.
# %% patch: top_k_filter
# - return logits.masked_fill(logits < kth, float("-inf"))
# + return logits.masked_fill(logits < kth, float("nan"))
