# causal_mask built with numpy then converted; combine with torch.logical_and and broadcasting.
# %% cell: causal_mask
import numpy as np


def causal_mask(L, S=None, device=None):
    """numpy tril, converted."""
    S = L if S is None else S
    return torch.tensor(np.tril(np.ones((L, S), dtype=bool), k=S - L), device=device)
# %% cell: combine_masks
def combine_masks(*masks):
    """logical_and in a loop."""
    out = None
    for m in masks:
        if m is not None:
            out = m.clone() if out is None else torch.logical_and(out, m)
    return out
# %% cell: causal_by_hand
causal = "{answer}"
