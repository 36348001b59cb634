# sinusoidal_encoding in numpy float64 (column exponent c - c % 2), converted with torch.tensor.
# %% cell: sinusoidal_encoding
def sinusoidal_encoding(L, d_model, base=10000.0, device=None):
    """numpy."""
    if d_model % 2 or d_model <= 0 or L < 0:
        raise ValueError("odd or non-positive d_model, or negative L")
    c = np.arange(d_model)
    ang = np.arange(L)[:, None] / np.power(base, (c - c % 2) / d_model)[None, :]
    pe = np.where(c % 2 == 0, np.sin(ang), np.cos(ang))
    return torch.tensor(pe, dtype=torch.float32, device=device)
