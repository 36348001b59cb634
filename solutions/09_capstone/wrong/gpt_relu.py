# breaks: test_tiny_gpt
# mistake: gpt_ffn_relu
# %% patch: tiny_gpt
# - return h + self.w_2(F.gelu(self.w_1(self.norm2(h))))
# + return h + self.w_2(F.relu(self.w_1(self.norm2(h))))
