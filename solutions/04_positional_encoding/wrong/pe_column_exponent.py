# breaks: test_sinusoidal_encoding
# mistake: pe_pair_exponent
# %% cell: sinusoidal_encoding
def sinusoidal_encoding(L: int, d_model: int, base: float = 10000.0, device=None) -> Tensor:
    """PE table."""
    if d_model < 2 or d_model % 2:
        raise ValueError("d_model must be a positive even int")
    if L < 0:
        raise ValueError(f"L must be >= 0, got {L}")
    pos = torch.arange(L, dtype=torch.float32)[:, None]
    j = torch.arange(d_model, dtype=torch.float32)
    ang = pos / base ** (j / d_model)
    return torch.where(j.long() % 2 == 0, torch.sin(ang), torch.cos(ang))
