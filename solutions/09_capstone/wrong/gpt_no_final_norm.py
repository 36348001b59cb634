# breaks: test_tiny_gpt
# mistake: final_layernorm_missing
# %% patch: tiny_gpt
# - logits = self.norm_f(x) @ self.tok_emb.weight.T  # (B, L, V): the tied output layer
# + logits = x @ self.tok_emb.weight.T
