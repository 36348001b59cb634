# breaks: test_feed_forward
# mistake: ffn_no_activation
# %% patch: feed_forward
# - h = F.relu(h) if self.activation == "relu" else F.gelu(h)
# + h = h  # no activation
