# breaks: test_mha_forward
# %% patch: mha_forward
# - out = self.w_o(merge_heads(out))
# + out = merge_heads(out)
