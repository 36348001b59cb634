# breaks: test_mha_forward
# mistake: missing_broadcast_axes
# Every mask of rank >= 3 gets a head axis, also a per-head (B, H, L, S) one.
# %% patch: mha_forward
# - mask = attn_mask[:, None] if attn_mask.dim() == 3 else attn_mask  # (B, L, S) -> (B, 1, L, S)
# + mask = attn_mask[:, None] if attn_mask.dim() >= 3 else attn_mask
