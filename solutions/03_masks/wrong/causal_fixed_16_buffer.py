# breaks: test_causal_mask
# mistake: fixed_size_mask_buffer
# The mask is sliced from a fixed 16 x 16 buffer (like a hard-coded block size): wrong beyond 16 positions.
# %% cell: causal_mask
_BUFFER = torch.ones(16, 16, dtype=torch.bool).tril()


def causal_mask(L, S=None, device=None):
    """Causal mask from a fixed buffer."""
    S = L if S is None else S
    return _BUFFER[S - L:S, :S]
