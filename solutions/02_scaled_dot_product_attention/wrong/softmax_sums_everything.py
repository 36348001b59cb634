# breaks: test_softmax, test_sdpa
# mistake: softmax_global_sum
# The denominator sums over every entry instead of along dim.
# %% patch: softmax
# - return e / e.sum(dim=dim, keepdim=True)
# + return e / e.sum()
