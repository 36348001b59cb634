# FeedForward.forward with F.linear on the layers' weights and GELU written with erf.
# %% patch: feed_forward
# - h = self.w_1(x)  # (..., d_ff)
# + h = F.linear(x, self.w_1.weight, self.w_1.bias)
# - h = F.relu(h) if self.activation == "relu" else F.gelu(h)
# + h = h.clamp(min=0) if self.activation == "relu" else 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
