# breaks: test_tiny_gpt
# mistake: forget_position_embedding
# %% patch: tiny_gpt
# - x = self.tok_emb(idx) + self.pos_emb(torch.arange(L, device=idx.device))  # (B, L, d_model)
# + x = self.tok_emb(idx)
