# breaks: test_tiny_gpt
# mistake: no_scale
# %% patch: tiny_gpt
# - scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, H, L, L)
# + scores = q @ k.transpose(-2, -1)
