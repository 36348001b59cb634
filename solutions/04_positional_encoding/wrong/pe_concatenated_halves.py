# breaks: test_sinusoidal_encoding
# mistake: pe_halves_not_interleaved
# %% cell: sinusoidal_encoding
def sinusoidal_encoding(L: int, d_model: int, base: float = 10000.0, device=None) -> Tensor:
    """PE table."""
    if d_model < 2 or d_model % 2:
        raise ValueError("d_model must be a positive even int")
    if L < 0:
        raise ValueError(f"L must be >= 0, got {L}")
    pos = torch.arange(L, dtype=torch.float32)[:, None]
    ang = pos / base ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    return torch.cat([torch.sin(ang), torch.cos(ang)], dim=-1)
