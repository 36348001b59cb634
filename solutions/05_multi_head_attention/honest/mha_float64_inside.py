# The attention helper computes in float64 and casts back; masked with finfo.min.
# %% patch: mha_forward
# - scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., L, S)
# + scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
# - scores = scores.masked_fill(~mask, float("-inf"))
# + scores = scores.masked_fill(~mask, torch.finfo(torch.float64).min)
# - return weights @ v, weights  # (..., L, d_v), (..., L, S)
# + return (weights @ v.double()).to(q.dtype), weights.to(q.dtype)
