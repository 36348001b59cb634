# breaks: test_causal_mask
# mistake: mask_not_bool
# %% cell: causal_mask
def causal_mask(L, S=None, device=None):
    """uint8 mask."""
    S = L if S is None else S
    return torch.ones(L, S, dtype=torch.uint8, device=device).tril(S - L)
