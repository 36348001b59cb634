# breaks: test_mha_forward
# mistake: mask_padded_queries
# %% patch: mha_forward
# - pad = key_padding_mask[:, None, None, :]
# + pad = key_padding_mask[:, None, :, None]  # (B, 1, L, 1): masks queries, not keys
