# combine_masks with torch.broadcast_tensors and all(); padding_mask with long conversion.
# %% cell: combine_masks
def combine_masks(*masks):
    """broadcast then all."""
    given = [m for m in masks if m is not None]
    if len(given) == 0:
        return None
    return torch.stack(torch.broadcast_tensors(*given)).all(dim=0)
# %% cell: padding_mask
def padding_mask(lengths, S):
    """long."""
    n = torch.as_tensor(lengths).to(torch.long).reshape(-1, 1)
    return torch.arange(S).reshape(1, -1) < n
