# breaks: test_tiny_gpt
# mistake: final_layernorm_missing
# %% patch: tiny_gpt
# - return self.norm_f(x) @ self.tok_emb.weight.T  # (B, L, V): the tied output layer
# + return x @ self.tok_emb.weight.T
