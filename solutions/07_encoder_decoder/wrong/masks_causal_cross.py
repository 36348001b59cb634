# breaks: test_encoder_decoder_masks
# mistake: needless_causal_mask
# %% patch: encoder_decoder_masks
# - cross = src[:, None, :].expand(B, L, S)  # decoder queries see every real source token
# + cross = torch.ones(L, S, dtype=torch.bool).tril()[None] & src[:, None, :]
