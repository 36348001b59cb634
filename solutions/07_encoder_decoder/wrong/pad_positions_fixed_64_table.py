# breaks: test_padding_mask, test_encoder_decoder_masks
# mistake: fixed_size_mask_buffer
# Positions sliced from a fixed 64-entry table: wrong beyond 64 positions.
# %% patch: padding_mask
# - return torch.arange(S)[None, :] < lengths[:, None]  # (1, S) < (B, 1) -> (B, S)
# + return torch.arange(64)[:S][None, :] < lengths[:, None]
