# breaks: test_feed_forward
# mistake: gelu_tanh_approximation
# %% patch: feed_forward
# - h = F.relu(h) if self.activation == "relu" else F.gelu(h)
# + h = F.relu(h) if self.activation == "relu" else F.gelu(h, approximate="tanh")
