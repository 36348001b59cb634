# breaks: test_encoder_decoder_masks
# mistake: encoder_causal
# %% cell: encoder_decoder_masks
def encoder_decoder_masks(src_lengths, tgt_lengths, S, L):
    """Masks."""
    src, tgt = padding_mask(src_lengths, S), padding_mask(tgt_lengths, L)
    B = src.shape[0]
    causal = torch.ones(L, L, dtype=torch.bool).tril()
    enc = torch.ones(S, S, dtype=torch.bool).tril()[None] & src[:, None, :]
    dec = causal[None] & tgt[:, None, :]
    cross = src[:, None, :].expand(B, L, S)
    return enc, dec, cross
