# breaks: test_tiny_gpt
# mistake: positions_off_by_one
# %% patch: tiny_gpt
# - x = self.tok_emb(idx) + self.pos_emb(torch.arange(L, device=idx.device))  # (B, L, d_model)
# + x = self.tok_emb(idx) + self.pos_emb(torch.arange(1, L + 1, device=idx.device))
