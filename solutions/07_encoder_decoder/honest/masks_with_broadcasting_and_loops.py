# padding_mask row by row with validation; masks built with repeat and logical_and.
# %% cell: padding_mask
def padding_mask(lengths, S):
    """Row by row."""
    lengths = torch.as_tensor(lengths)
    if lengths.is_floating_point() or lengths.dtype == torch.bool:
        raise TypeError("lengths must be integers")
    if lengths.dim() != 1:
        raise ValueError("lengths must be 1-D")
    if (lengths < 1).any() or (lengths > S).any():
        raise ValueError(f"every length must be in 1..{S}")
    rows = [torch.cat([torch.ones(int(n), dtype=torch.bool), torch.zeros(S - int(n), dtype=torch.bool)])
            for n in lengths]
    return torch.stack(rows)
# %% cell: encoder_decoder_masks
def encoder_decoder_masks(src_lengths, tgt_lengths, S, L):
    """With repeat and logical_and."""
    src = padding_mask(src_lengths, S)
    tgt = padding_mask(tgt_lengths, L)
    causal = torch.arange(L)[None, :] <= torch.arange(L)[:, None]
    enc = src.unsqueeze(1).repeat(1, S, 1)
    dec = torch.logical_and(causal.unsqueeze(0), tgt.unsqueeze(1))
    cross = src.unsqueeze(1).repeat(1, L, 1)
    return enc, dec, cross
# %% cell: mask_by_hand
mask: list = "{answer}"
