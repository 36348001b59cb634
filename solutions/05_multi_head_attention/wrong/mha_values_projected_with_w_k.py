# breaks: test_mha_forward
# mistake: values_projected_with_w_k
# %% patch: mha_forward
# - v = split_heads(self.w_v(value), self.n_heads)
# + v = split_heads(self.w_k(value), self.n_heads)
