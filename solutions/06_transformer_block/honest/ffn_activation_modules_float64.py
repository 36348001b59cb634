# FeedForward.forward with nn.ReLU / nn.GELU modules, a matmul with the weight's transpose, the activation's output carried in float64.
# %% patch: feed_forward
# - h = self.w_1(x)  # (..., d_ff)
# + act = nn.ReLU() if self.activation == "relu" else nn.GELU(approximate="none")
# + h = act(torch.matmul(x, self.w_1.weight.t()) + self.w_1.bias)
# - h = F.relu(h) if self.activation == "relu" else F.gelu(h)
# + h = h.double()
# - return self.w_2(h)  # (..., d_model)
# + return self.w_2(h.float())
