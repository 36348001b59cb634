# sinusoidal_encoding with torch.stack + flatten to interleave sin and cos; by-hand answers typed as strings.
# %% cell: sinusoidal_encoding
def sinusoidal_encoding(L, d_model, base=10000.0, device=None):
    """Interleave by stacking."""
    if d_model % 2 != 0 or d_model < 2:
        raise ValueError("d_model must be even and positive")
    if L < 0:
        raise ValueError("L must not be negative")
    pos = torch.arange(L, dtype=torch.float32)[:, None]
    inv = torch.exp(-math.log(base) * torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    ang = pos * inv
    return torch.stack([ang.sin(), ang.cos()], dim=-1).reshape(L, d_model)
# %% cell: pe_by_hand
pe = "{answer}"
