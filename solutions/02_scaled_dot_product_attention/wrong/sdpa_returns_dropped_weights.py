# breaks: test_sdpa
# mistake: weights_after_dropout
# The weights returned are the ones after dropout, not the softmax probabilities.
# %% patch: sdpa
# - return weights_used @ v, weights  # (..., L, S) @ (..., S, d_v) -> (..., L, d_v)
# + return weights_used @ v, weights_used
