# breaks: test_causal_mask
# mistake: mask_not_bool
# %% cell: causal_mask
def causal_mask(L, S=None, device=None):
    """Causal mask."""
    S = L if S is None else S
    return torch.ones(L, S).tril(diagonal=S - L)
