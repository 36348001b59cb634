# breaks: test_sdpa
# mistake: dropout_not_rescaled
# %% patch: sdpa
# - weights_used = weights * keep / (1 - dropout_p)
# + weights_used = weights * keep
