# breaks: test_mha_forward
# mistake: keys_projected_with_w_q
# %% patch: mha_forward
# - k = split_heads(self.w_k(key), self.n_heads)
# + k = split_heads(self.w_q(key), self.n_heads)
