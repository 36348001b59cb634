# nanoGPT's way: the causal mask sliced from a registered (persistent) buffer of 1024 positions, one fused q/k/v
# split with permute; a float 0/1 table compared with 0.
# %% patch: causal_self_attention
# - self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
# + self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
# + self.register_buffer("bias", torch.tril(torch.ones(1024, 1024)).view(1, 1, 1024, 1024))
# - q, k, v = (w(x).view(B, L, self.n_heads, self.d_k).transpose(1, 2) for w in (self.w_q, self.w_k, self.w_v))  # (B, H, L, d_k)
# + q, k, v = (w(x).view(B, L, self.n_heads, self.d_k).permute(0, 2, 1, 3) for w in (self.w_q, self.w_k, self.w_v))
# - weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
# + weights = F.softmax(scores.masked_fill(self.bias[:, :, :L, :L] == 0, float("-inf")), dim=-1)
