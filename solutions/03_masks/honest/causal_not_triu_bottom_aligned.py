# causal_mask as the complement of the strict upper triangle, offset for S > L; combine by multiplying bools.
# %% cell: causal_mask
def causal_mask(L, S=None, device=None):
    """Complement of triu."""
    if S is None:
        S = L
    return torch.triu(torch.ones(L, S, dtype=torch.bool, device=device), diagonal=S - L + 1).logical_not()
# %% cell: combine_masks
def combine_masks(*masks):
    """Multiply."""
    out = None
    for m in masks:
        if m is None:
            continue
        out = m if out is None else out * m
    return out
