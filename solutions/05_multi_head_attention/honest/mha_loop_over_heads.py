# The attention helper loops over heads (one head at a time, then stacks).
# %% patch: mha_forward
# - scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., L, S)
# + scores = torch.stack([q[:, h] @ k[:, h].transpose(-2, -1) for h in range(q.shape[1])], dim=1) / math.sqrt(q.shape[-1])
