# encoder_decoder_masks from index comparisons, repeat() instead of expand().
# %% cell: encoder_decoder_masks
def encoder_decoder_masks(src_lengths, tgt_lengths, S, L):
    """Built from index comparisons."""
    src_lengths, tgt_lengths = torch.as_tensor(src_lengths), torch.as_tensor(tgt_lengths)
    B = len(src_lengths)
    i = torch.arange(L)[:, None]
    j = torch.arange(L)[None, :]
    src_ok = torch.arange(S)[None, :] < src_lengths[:, None]
    tgt_ok = torch.arange(L)[None, :] < tgt_lengths[:, None]
    enc = src_ok[:, None, :].repeat(1, S, 1)
    dec = (j <= i)[None, :, :] & tgt_ok[:, None, :]
    cross = src_ok.unsqueeze(1).repeat(1, L, 1)
    return enc, dec.contiguous(), cross
