# attn_mask brought to 4-D by rank (2-D: [None, None], 3-D: unsqueeze(1)), padding via view.
# %% patch: mha_forward
# - mask = attn_mask[:, None] if attn_mask.dim() == 3 else attn_mask  # (B, L, S) -> (B, 1, L, S)
# + mask = {2: lambda m: m[None, None], 3: lambda m: m.unsqueeze(1), 4: lambda m: m}[attn_mask.dim()](attn_mask)
# - pad = key_padding_mask[:, None, None, :]  # (B, S) -> (B, 1, 1, S)
# + pad = key_padding_mask.view(key_padding_mask.shape[0], 1, 1, -1)
