# causal_mask by comparing index grids; padding_mask with a loop; combine with functools.reduce.
# %% cell: causal_mask
def causal_mask(L, S=None, device=None):
    """j <= i + (S - L) on an index grid."""
    S = L if S is None else S
    i = torch.arange(L, device=device).unsqueeze(1)
    j = torch.arange(S, device=device).unsqueeze(0)
    return j <= i + (S - L)
# %% cell: padding_mask
def padding_mask(lengths, S):
    """Row by row."""
    lengths = [int(n) for n in lengths]
    out = torch.zeros(len(lengths), S, dtype=torch.bool)
    for b, n in enumerate(lengths):
        out[b, :n] = True
    return out
# %% cell: combine_masks
import functools


def combine_masks(*masks):
    """reduce with &."""
    given = [m for m in masks if m is not None]
    return functools.reduce(lambda x, y: x & y, given) if given else None
