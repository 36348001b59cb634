# breaks: test_mha_forward
# %% patch: mha_forward
# - pad = key_padding_mask[:, None, None, :]
# + pad = ~key_padding_mask[:, None, None, :]
