# breaks: test_padding_mask, test_encoder_decoder_masks
# mistake: inverted_mask
# %% cell: padding_mask
def padding_mask(lengths, S):
    """Padding mask."""
    lengths = torch.as_tensor(lengths)
    if bool((lengths < 1).any()) or bool((lengths > S).any()):
        raise ValueError('every length must be in 1 .. S')
    return torch.arange(S)[None, :] >= lengths[:, None]
