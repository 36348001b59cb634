# breaks: test_encoder_decoder_masks
# mistake: fixed_size_mask_buffer
# The decoder's causal mask is sliced from a fixed 16 x 16 buffer: targets longer than 16 fail.
# %% patch: encoder_decoder_masks
# - causal = torch.ones(L, L, dtype=torch.bool).tril()  # (L, L): query i sees keys j <= i
# + causal = torch.ones(16, 16, dtype=torch.bool).tril()[:L, :L]
