# breaks: test_causal_mask
# mistake: fixed_size_mask_buffer
# A larger fixed buffer (64 x 64) still fails beyond 64 positions.
# %% cell: causal_mask
def causal_mask(L, S=None, device=None):
    """Causal mask from a 64 x 64 buffer."""
    S = L if S is None else S
    return torch.tril(torch.ones(64, 64, dtype=torch.bool))[S - L:S, :S]
