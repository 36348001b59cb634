# breaks: test_top_k_filter
# Sign slip: dropped logits set to +inf (sampling would pick exactly the dropped tokens).
# %% patch: top_k_filter
# - return logits.masked_fill(logits < kth, float("-inf"))
# + return logits.masked_fill(logits < kth, float("inf"))
