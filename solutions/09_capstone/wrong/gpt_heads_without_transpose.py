# breaks: test_causal_self_attention
# mistake: reshape_without_transpose
# %% patch: causal_self_attention
# - q, k, v = (w(x).view(B, L, self.n_heads, self.d_k).transpose(1, 2) for w in (self.w_q, self.w_k, self.w_v))  # (B, H, L, d_k)
# + q, k, v = (w(x).reshape(B, self.n_heads, L, self.d_k) for w in (self.w_q, self.w_k, self.w_v))
