# breaks: test_hard_lookup
# mistake: assumes_batch_axis
# One-hot built for a fixed (B, L, S) layout: wrong without a batch axis (2-D inputs).
# %% cell: hard_lookup
def hard_lookup(query, keys, values):
    """Batched gather only."""
    best = torch.bmm(query, keys.transpose(1, 2)).argmax(dim=-1)
    return torch.stack([values[b, best[b]] for b in range(query.shape[0])])
