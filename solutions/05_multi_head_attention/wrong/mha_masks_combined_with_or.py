# breaks: test_mha_forward
# mistake: combine_with_or
# attn_mask and key_padding_mask combined with OR: a key allowed by either mask is attended.
# %% patch: mha_forward
# - mask = pad if mask is None else mask & pad
# + mask = pad if mask is None else mask | pad
