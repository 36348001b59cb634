# breaks: test_block
# mistake: ffn_reads_block_input
# %% patch: block
# - return h + self.w_2(F.gelu(self.w_1(self.norm2(h))))
# + return h + self.w_2(F.gelu(self.w_1(self.norm2(x))))
