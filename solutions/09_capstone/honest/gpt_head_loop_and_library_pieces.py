# TinyGPT written differently: a loop over heads with weight slices, a finite fill, torch.where, F.layer_norm by hand,
# GELU from erf, an explicit tied F.linear, positions broadcast from the table, the loss from log_softmax and gather.
# %% patch: causal_self_attention
# - B, L, d_model = x.shape
# + L = x.shape[1]
# + allowed = torch.arange(L)[:, None] >= torch.arange(L)[None, :]
# + heads = []
# + for h in range(self.n_heads):
# +     cols = slice(h * self.d_k, (h + 1) * self.d_k)
# +     q = F.linear(x, self.w_q.weight[cols], self.w_q.bias[cols])
# +     k = F.linear(x, self.w_k.weight[cols], self.w_k.bias[cols])
# +     v = F.linear(x, self.w_v.weight[cols], self.w_v.bias[cols])
# +     s = torch.einsum("bld,bsd->bls", q, k) * self.d_k ** -0.5
# +     s = torch.where(allowed, s, torch.full_like(s, -1e9))
# +     heads.append(torch.softmax(s, dim=2) @ v)
# + return self.w_o(torch.cat(heads, dim=-1))
# %% patch: block
# - h = x + self.attn(self.norm1(x))  # (B, L, d_model): the residual stream is only added to
# + d = x.shape[-1]
# + h = x + self.attn(F.layer_norm(x, (d,), self.norm1.weight, self.norm1.bias))
# - return h + self.w_2(F.gelu(self.w_1(self.norm2(h))))
# + hidden = self.w_1(F.layer_norm(h, (d,), self.norm2.weight, self.norm2.bias))
# + return h + self.w_2(0.5 * hidden * (1 + torch.erf(hidden / math.sqrt(2))))
# %% patch: tiny_gpt
# - x = self.tok_emb(idx) + self.pos_emb(torch.arange(L, device=idx.device))  # (B, L, d_model)
# + x = self.tok_emb(idx) + self.pos_emb.weight[:L]
# - logits = self.norm_f(x) @ self.tok_emb.weight.T  # (B, L, V): the tied output layer
# + logits = F.linear(self.norm_f(x), self.tok_emb.weight)
# - loss = None if targets is None else F.cross_entropy(logits.reshape(B * L, -1), targets.reshape(B * L))
# + loss = None
# + if targets is not None:
# +     logp = logits.log_softmax(dim=-1)
# +     loss = -logp.gather(-1, targets[..., None]).mean()
