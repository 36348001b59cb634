# breaks: test_causal_self_attention
# mistake: no_scale
# %% patch: causal_self_attention
# - scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, H, L, L)
# + scores = q @ k.transpose(-2, -1)
