# breaks: test_causal_self_attention
# mistake: keys_projected_with_w_q
# %% patch: causal_self_attention
# - q, k, v = (w(x).view(B, L, self.n_heads, self.d_k).transpose(1, 2) for w in (self.w_q, self.w_k, self.w_v))  # (B, H, L, d_k)
# + q, k, v = (w(x).view(B, L, self.n_heads, self.d_k).transpose(1, 2) for w in (self.w_q, self.w_q, self.w_v))
