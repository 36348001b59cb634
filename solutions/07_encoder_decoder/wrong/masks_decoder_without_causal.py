# breaks: test_encoder_decoder_masks
# mistake: missing_causal_mask
# %% cell: encoder_decoder_masks
def encoder_decoder_masks(src_lengths, tgt_lengths, S, L):
    """Masks."""
    src, tgt = padding_mask(src_lengths, S), padding_mask(tgt_lengths, L)
    B = src.shape[0]
    causal = torch.ones(L, L, dtype=torch.bool).tril()
    enc = src[:, None, :].expand(B, S, S)
    dec = tgt[:, None, :].expand(B, L, L)
    cross = src[:, None, :].expand(B, L, S)
    return enc, dec, cross
