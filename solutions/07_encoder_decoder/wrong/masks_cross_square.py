# breaks: test_encoder_decoder_masks
# mistake: missing_broadcast_axes
# The cross-attention mask built (B, S, S) like the encoder's, instead of (B, L, S).
# %% patch: encoder_decoder_masks
# - cross = src[:, None, :].expand(B, L, S)  # decoder queries see every real source token
# + cross = src[:, None, :].expand(B, S, S)
