# The given attention helper rewritten with einsum.
# %% patch: mha_forward
# - scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., L, S)
# + scores = torch.einsum("...ld,...sd->...ls", q, k) / math.sqrt(q.shape[-1])
# - return weights @ v, weights  # (..., L, d_v), (..., L, S)
# + return torch.einsum("...ls,...sd->...ld", weights, v), weights
