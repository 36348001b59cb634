# sinusoidal_encoding via a (L, d/2, 2) stack viewed flat; equivariance with a perm tensor and allclose(rtol=0).
# %% cell: sinusoidal_encoding
def sinusoidal_encoding(L, d_model, base=10000.0, device=None):
    """view."""
    if d_model % 2 != 0 or d_model <= 0:
        raise ValueError("d_model must be a positive even number")
    if L < 0:
        raise ValueError("L must not be negative")
    i = torch.arange(d_model // 2, dtype=torch.float32)
    ang = torch.arange(L, dtype=torch.float32).unsqueeze(1) / torch.pow(torch.tensor(base), 2 * i / d_model)
    return torch.stack((ang.sin(), ang.cos()), dim=2).view(L, d_model)
# %% cell: is_permutation_equivariant
def is_permutation_equivariant(layer, x, perm, atol=1e-5):
    """perm tensor."""
    p = torch.tensor(perm, dtype=torch.long)
    return torch.allclose(layer(x[:, p]), layer(x)[:, p], rtol=0.0, atol=atol)
