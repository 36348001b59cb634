# breaks: test_block
# mistake: gpt_ffn_relu
# %% patch: block
# - return h + self.w_2(F.gelu(self.w_1(self.norm2(h))))
# + return h + self.w_2(F.relu(self.w_1(self.norm2(h))))
