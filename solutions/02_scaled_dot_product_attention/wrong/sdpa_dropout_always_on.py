# breaks: test_sdpa
# mistake: dropout_left_on
# Dropout with a fixed rate, applied whatever dropout_p says.
# %% patch: sdpa
# - if dropout_p > 0:
# + if True:
# - keep = torch.rand_like(weights) >= dropout_p
# + keep = torch.rand_like(weights) >= 0.1
# - weights_used = weights * keep / (1 - dropout_p)
# + weights_used = weights * keep / 0.9
