# padding_mask with expand and unsqueeze on a tensor made by torch.tensor.
# %% cell: padding_mask
def padding_mask(lengths, S):
    """expand."""
    lengths = lengths if isinstance(lengths, torch.Tensor) else torch.tensor(lengths)
    pos = torch.arange(S).expand(len(lengths), S)
    return pos < lengths.unsqueeze(-1)
