# breaks: test_mha_forward
# mistake: forget_w_o
# %% patch: mha_forward
# - out = self.w_o(merge_heads(out))
# + out = merge_heads(out)
