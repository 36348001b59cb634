# breaks: test_block
# mistake: block_post_ln
# Block normalises after each residual sum (post-LN) in GPT's pre-LN block.
# %% patch: block
# - h = x + self.attn(self.norm1(x))  # (B, L, d_model): the residual stream is only added to
# + h = self.norm1(x + self.attn(x))
# - return h + self.w_2(F.gelu(self.w_1(self.norm2(h))))
# + return self.norm2(h + self.w_2(F.gelu(self.w_1(h))))
