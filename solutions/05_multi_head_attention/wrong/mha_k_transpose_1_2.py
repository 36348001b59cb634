# breaks: test_mha_forward
# mistake: transpose_fixed_axes
# k.transpose(1, 2) on (B, H, S, d_k) swaps heads and keys instead of transposing the last two axes.
# %% patch: mha_forward
# - scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., L, S)
# + scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
