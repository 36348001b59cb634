# breaks: test_encoder_decoder_masks
# %% patch: encoder_decoder_masks
# - cross = src[:, None, :].expand(B, L, S)  # decoder queries see every real source token
# + cross = torch.ones(L, S, dtype=torch.bool).tril()[None] & src[:, None, :]
