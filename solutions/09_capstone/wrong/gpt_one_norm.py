# breaks: test_block
# mistake: one_norm_for_both_sublayers
# %% patch: block
# - return h + self.w_2(F.gelu(self.w_1(self.norm2(h))))
# + return h + self.w_2(F.gelu(self.w_1(self.norm1(h))))
