# TinyGPT with nanoGPT's tied head added in __init__ (lm_head.weight = tok_emb.weight); Block calls self.attn.forward.
# %% patch: tiny_gpt
# - self.norm_f = nn.LayerNorm(d_model)
# + self.norm_f = nn.LayerNorm(d_model)
# + self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
# + self.lm_head.weight = self.tok_emb.weight  # tied, nanoGPT's way
# - logits = self.norm_f(x) @ self.tok_emb.weight.T  # (B, L, V): the tied output layer
# + logits = self.lm_head(self.norm_f(x))
# %% patch: block
# - h = x + self.attn(self.norm1(x))  # (B, L, d_model): the residual stream is only added to
# + h = x + self.attn.forward(self.norm1(x))
