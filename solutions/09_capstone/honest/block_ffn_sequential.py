# Block's FFN branch as an nn.Sequential of norm2, w_1, GELU, w_2.
# %% patch: block
# - return h + self.w_2(F.gelu(self.w_1(self.norm2(h))))
# + return h + nn.Sequential(self.norm2, self.w_1, nn.GELU(), self.w_2)(h)
