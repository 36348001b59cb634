# breaks: test_padding_mask, test_encoder_decoder_masks
# mistake: padding_width_from_lengths
# The mask is as wide as the longest sequence instead of S: too narrow when every sequence is padded.
# %% patch: padding_mask
# - return torch.arange(S)[None, :] < lengths[:, None]  # (1, S) < (B, 1) -> (B, S)
# + return torch.arange(int(lengths.max()))[None, :] < lengths[:, None]
