# breaks: test_mha_forward
# mistake: inverted_mask
# %% patch: mha_forward
# - pad = key_padding_mask[:, None, None, :]
# + pad = ~key_padding_mask[:, None, None, :]
