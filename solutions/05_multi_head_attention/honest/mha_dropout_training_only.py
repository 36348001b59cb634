# Attention dropout applied only in training mode (F.dropout with training=self.training); masks combined with logical_and.
# %% patch: mha_forward
# - out, weights = attention(q, k, v, mask)  # (B, H, L, d_v), (B, H, L, S)
# + out, weights = attention(q, k, v, mask)
# + out = F.dropout(weights, p=self.dropout, training=self.training) @ v
# - mask = pad if mask is None else mask & pad
# + mask = pad if mask is None else torch.logical_and(mask, pad)
