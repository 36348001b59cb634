# breaks: test_sinusoidal_encoding
# mistake: pe_base_ignored
# %% cell: sinusoidal_encoding
def sinusoidal_encoding(L: int, d_model: int, base: float = 10000.0, device=None) -> Tensor:
    """PE table."""
    if d_model < 2 or d_model % 2:
        raise ValueError("d_model must be a positive even int")
    if L < 0:
        raise ValueError(f"L must be >= 0, got {L}")
    pos = torch.arange(0, L + 0, dtype=torch.float32)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)
    ang = pos / 10000.0 ** (two_i / d_model)
    t = torch.zeros(L, d_model)
    t[:, 0::2], t[:, 1::2] = torch.sin(ang), torch.cos(ang)
    return t
