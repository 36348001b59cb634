# breaks: test_causal_mask
# mistake: causal_excludes_diagonal
# %% cell: causal_mask
def causal_mask(L, S=None, device=None):
    """Causal mask."""
    S = L if S is None else S
    return torch.ones(L, S, dtype=torch.bool).tril(diagonal=S - L - 1)
