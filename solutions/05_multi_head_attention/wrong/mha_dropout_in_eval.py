# breaks: test_mha_forward
# mistake: dropout_left_on
# F.dropout without training=self.training: the weights are dropped in eval mode too.
# %% patch: mha_forward
# - out, weights = attention(q, k, v, mask)  # (B, H, L, d_v), (B, H, L, S)
# + out, weights = attention(q, k, v, mask)
# + out = F.dropout(weights, p=self.dropout) @ v
