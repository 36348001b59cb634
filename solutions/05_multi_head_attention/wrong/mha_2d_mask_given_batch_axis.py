# breaks: test_mha_forward
# mistake: missing_broadcast_axes
# Every attn_mask gets a head axis at position 1, also a 2-D (L, S) one (which then lines up with the heads).
# %% patch: mha_forward
# - mask = attn_mask[:, None] if attn_mask.dim() == 3 else attn_mask  # (B, L, S) -> (B, 1, L, S)
# + mask = attn_mask[:, None]
