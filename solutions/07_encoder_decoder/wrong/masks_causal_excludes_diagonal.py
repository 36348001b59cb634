# breaks: test_encoder_decoder_masks
# mistake: causal_excludes_diagonal
# The decoder's causal mask hides the diagonal too (tril(-1)).
# %% patch: encoder_decoder_masks
# - causal = torch.ones(L, L, dtype=torch.bool).tril()  # (L, L): query i sees keys j <= i
# + causal = torch.ones(L, L, dtype=torch.bool).tril(diagonal=-1)
