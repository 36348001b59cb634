# CausalSelfAttention with one fused QKV F.linear, permute, and a finfo.min fill via torch.where.
# %% patch: causal_self_attention
# - q, k, v = (w(x).view(B, L, self.n_heads, self.d_k).transpose(1, 2) for w in (self.w_q, self.w_k, self.w_v))  # (B, H, L, d_k)
# + w = torch.cat([self.w_q.weight, self.w_k.weight, self.w_v.weight]); b = torch.cat([self.w_q.bias, self.w_k.bias, self.w_v.bias])
# + q, k, v = (t.reshape(B, L, self.n_heads, self.d_k).permute(0, 2, 1, 3) for t in F.linear(x, w, b).chunk(3, dim=-1))
# - weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
# + weights = torch.softmax(torch.where(causal, scores, torch.finfo(scores.dtype).min), dim=-1)
