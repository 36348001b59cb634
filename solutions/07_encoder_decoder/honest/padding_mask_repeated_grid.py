# padding_mask comparing a repeated position grid with the lengths (a tensor built from a list).
# %% cell: padding_mask
def padding_mask(lengths, S):
    """Comparison on a repeated position grid."""
    lengths = torch.tensor(list(map(int, lengths)))
    if (lengths < 1).any() or (lengths > S).any():
        raise ValueError("each length must be in 1 .. S")
    grid = torch.arange(S).repeat(len(lengths), 1)
    return grid < lengths.unsqueeze(1)
