# breaks: test_block
# mistake: gelu_tanh_approximation
# %% patch: block
# - return h + self.w_2(F.gelu(self.w_1(self.norm2(h))))
# + return h + self.w_2(F.gelu(self.w_1(self.norm2(h)), approximate="tanh"))
