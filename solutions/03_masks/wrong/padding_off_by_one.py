# breaks: test_padding_mask
# mistake: length_off_by_one
# %% cell: padding_mask
def padding_mask(lengths, S):
    """Padding mask."""
    lengths = torch.as_tensor(lengths)
    return torch.arange(S)[None, :] <= lengths[:, None]
