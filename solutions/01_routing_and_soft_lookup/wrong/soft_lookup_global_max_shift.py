# breaks: test_soft_lookup
# mistake: softmax_max_shift_global
# The maximum of the whole tensor is subtracted, not each row's: rows far below it underflow to 0 / 0.
# %% patch: soft_lookup
# - scores = scores - scores.max(dim=-1, keepdim=True).values  # stable exp
# + scores = scores - scores.max()
