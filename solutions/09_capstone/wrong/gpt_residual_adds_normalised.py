# breaks: test_block
# mistake: residual_adds_normalised_input
# %% patch: block
# - h = x + self.attn(self.norm1(x))  # (B, L, d_model): the residual stream is only added to
# + n = self.norm1(x)
# + h = n + self.attn(n)
