# sinusoidal_encoding in float64 with explicit pair loops; equivariance with index_select.
# %% cell: sinusoidal_encoding
def sinusoidal_encoding(L, d_model, base=10000.0, device=None):
    """Loop over the pairs."""
    if not isinstance(d_model, int) or d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be even and >= 2, got {d_model}")
    if L < 0:
        raise ValueError(f"L must be >= 0, got {L}")
    pos = torch.arange(L, dtype=torch.float64)
    table = torch.empty(L, d_model, dtype=torch.float64)
    for i in range(d_model // 2):
        freq = 1.0 / base ** (2 * i / d_model)
        table[:, 2 * i] = torch.sin(pos * freq)
        table[:, 2 * i + 1] = torch.cos(pos * freq)
    return table.float()
# %% cell: is_permutation_equivariant
def is_permutation_equivariant(layer, x, perm, atol=1e-5):
    """With index_select."""
    idx = torch.as_tensor(list(perm))
    with torch.no_grad():
        a = layer(x.index_select(1, idx))
        b = layer(x).index_select(1, idx)
    return (a - b).abs().max().item() <= atol
