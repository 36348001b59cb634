# breaks: test_causal_mask
# mistake: inverted_mask
# %% cell: causal_mask
def causal_mask(L, S=None, device=None):
    """Causal mask."""
    S = L if S is None else S
    return torch.ones(L, S, dtype=torch.bool).triu(diagonal=S - L + 1)
