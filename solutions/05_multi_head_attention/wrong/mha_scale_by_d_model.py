# breaks: test_mha_forward
# mistake: scale_by_d_model
# %% patch: mha_forward
# - scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., L, S)
# + scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[1] * q.shape[-1])
