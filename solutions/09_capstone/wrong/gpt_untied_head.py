# breaks: test_tiny_gpt
# mistake: untied_output_layer
# %% patch: tiny_gpt
# - self.norm_f = nn.LayerNorm(d_model)
# + self.norm_f = nn.LayerNorm(d_model)
# + self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
# - logits = self.norm_f(x) @ self.tok_emb.weight.T  # (B, L, V): the tied output layer
# + logits = self.lm_head(self.norm_f(x))
