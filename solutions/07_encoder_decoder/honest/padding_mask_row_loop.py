# padding_mask filled row by row from a Python list of lengths.
# %% cell: padding_mask
def padding_mask(lengths, S):
    """Row by row."""
    lengths = [int(n) for n in lengths]
    for n in lengths:
        if n < 1 or n > S:
            raise ValueError(f"length {n} outside 1..{S}")
    out = torch.zeros(len(lengths), S, dtype=torch.bool)
    for b, n in enumerate(lengths):
        out[b, :n] = True
    return out
