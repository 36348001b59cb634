# breaks: test_feed_forward
# mistake: ffn_activation_ignored
# %% patch: feed_forward
# - h = F.relu(h) if self.activation == "relu" else F.gelu(h)
# + h = F.relu(h)
