# breaks: test_mha_forward
# mistake: missing_broadcast_axes
# Masks brought to 4-D by adding leading axes: a (B, L, S) mask becomes (1, B, L, S) and lines up B with the heads.
# %% patch: mha_forward
# - mask = attn_mask[:, None] if attn_mask.dim() == 3 else attn_mask  # (B, L, S) -> (B, 1, L, S)
# + mask = attn_mask
# + while mask.dim() < 4:
# +     mask = mask.unsqueeze(0)
