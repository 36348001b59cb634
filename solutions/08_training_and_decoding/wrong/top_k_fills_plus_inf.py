# breaks: test_top_k_filter
# mistake: filter_fill_wrong_sign
# Sign slip: dropped logits set to +inf (sampling would pick exactly the dropped tokens).
# %% patch: top_k_filter
# - return logits.masked_fill(logits < kth, float("-inf"))
# + return logits.masked_fill(logits < kth, float("inf"))
