# breaks: test_sinusoidal_encoding
# mistake: pe_exponent_doubled
# Loops over the even columns i and writes 2i in the exponent again: 1 / base^(2 * column / d_model).
# %% cell: sinusoidal_encoding
def sinusoidal_encoding(L, d_model, base=10000.0, device=None):
    """Loop over even columns."""
    if d_model % 2 or d_model < 2:
        raise ValueError("d_model must be even")
    if L < 0:
        raise ValueError(f"L must be >= 0, got {L}")
    pe = torch.zeros(L, d_model)
    for pos in range(L):
        for i in range(0, d_model, 2):
            pe[pos, i] = math.sin(pos / base ** (2 * i / d_model))
            pe[pos, i + 1] = math.cos(pos / base ** (2 * i / d_model))
    return pe
