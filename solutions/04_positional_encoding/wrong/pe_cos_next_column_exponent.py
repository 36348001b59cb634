# breaks: test_sinusoidal_encoding
# mistake: pe_pair_exponent
# Loops over the columns: the cosine column 2i + 1 gets its own exponent (2i + 1) / d_model (wrong at odd columns only).
# %% cell: sinusoidal_encoding
def sinusoidal_encoding(L, d_model, base=10000.0, device=None):
    """Per-column loop."""
    if d_model % 2 or d_model < 2:
        raise ValueError("d_model must be even")
    if L < 0:
        raise ValueError(f"L must be >= 0, got {L}")
    pe = torch.zeros(L, d_model)
    pos = torch.arange(L, dtype=torch.float32)
    for j in range(d_model):
        ang = pos / base ** (j / d_model)
        pe[:, j] = torch.sin(ang) if j % 2 == 0 else torch.cos(ang)
    return pe
