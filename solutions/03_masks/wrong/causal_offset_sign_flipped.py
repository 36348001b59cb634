# breaks: test_causal_mask
# mistake: causal_kv_misaligned
# The diagonal offset with the wrong sign: tril(L - S) instead of tril(S - L).
# %% cell: causal_mask
def causal_mask(L, S=None, device=None):
    """Causal mask."""
    S = L if S is None else S
    return torch.ones(L, S, dtype=torch.bool, device=device).tril(L - S)
