# TinyGPT indexing the embedding weights directly and taking the loss on (B, V, L) logits.
# %% patch: tiny_gpt
# - x = self.tok_emb(idx) + self.pos_emb(torch.arange(L, device=idx.device))  # (B, L, d_model)
# + x = self.tok_emb.weight[idx] + self.pos_emb.weight[:L][None]
# - loss = None if targets is None else F.cross_entropy(logits.reshape(B * L, -1), targets.reshape(B * L))
# + loss = None if targets is None else F.cross_entropy(logits.transpose(1, 2), targets)
