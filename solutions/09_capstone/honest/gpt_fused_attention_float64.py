# TinyGPT with torch's fused attention (is_causal=True), heads split with permute, the blocks in float64 inside.
# %% patch: causal_self_attention
# - scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, H, L, L)
# + out = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True).to(x.dtype)
# + return self.w_o(out.permute(0, 2, 1, 3).reshape(B, L, d_model))
