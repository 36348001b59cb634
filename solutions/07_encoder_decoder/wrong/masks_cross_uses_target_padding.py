# breaks: test_encoder_decoder_masks
# mistake: mask_padded_queries
# %% patch: encoder_decoder_masks
# - cross = src[:, None, :].expand(B, L, S)  # decoder queries see every real source token
# + cross = tgt[:, :, None].expand(B, L, S)
