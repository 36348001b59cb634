# breaks: test_sinusoidal_encoding
# %% cell: sinusoidal_encoding
def sinusoidal_encoding(L: int, d_model: int, base: float = 10000.0, device=None) -> Tensor:
    """PE table, filled two column pairs per step (the last pair is lost when d_model / 2 is odd)."""
    if d_model < 2 or d_model % 2:
        raise ValueError("d_model must be a positive even int")
    pos = torch.arange(L, dtype=torch.float32)[:, None]
    table = torch.zeros(L, d_model)
    for i in range(0, d_model - 3, 4):
        for j in (i, i + 2):
            table[:, j] = torch.sin(pos[:, 0] / base ** (j / d_model))
            table[:, j + 1] = torch.cos(pos[:, 0] / base ** (j / d_model))
    return table
