# breaks: test_causal_mask
# mistake: causal_kv_misaligned
# ~triu(1): right for a square mask, anchored at the top-left corner when S > L.
# %% cell: causal_mask
def causal_mask(L, S=None, device=None):
    """Not the strict upper triangle."""
    S = S or L
    return ~torch.ones(L, S, dtype=torch.bool, device=device).triu(1)
