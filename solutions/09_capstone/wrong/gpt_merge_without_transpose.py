# breaks: test_causal_self_attention
# mistake: merge_without_transpose
# %% patch: causal_self_attention
# - out = (weights @ v).transpose(1, 2).reshape(B, L, d_model)  # (B, H, L, d_k) -> (B, L, d_model)
# + out = (weights @ v).reshape(B, L, d_model)
