# breaks: test_feed_forward
# mistake: ffn_activation_on_output
# %% patch: feed_forward
# - return self.w_2(h)  # (..., d_model)
# + return (F.relu if self.activation == "relu" else F.gelu)(self.w_2(h))
