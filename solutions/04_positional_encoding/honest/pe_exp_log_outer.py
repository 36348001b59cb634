# sinusoidal_encoding with exp(-log(base) 2i/d), torch.outer, empty + in-place copies; equivariance with the inverse permutation on both sides.
# %% cell: sinusoidal_encoding
def sinusoidal_encoding(L, d_model, base=10000.0, device=None):
    """outer."""
    if isinstance(d_model, bool) or not isinstance(d_model, int) or d_model <= 0 or d_model % 2 == 1:
        raise ValueError(f"d_model must be even, got {d_model}")
    if L < 0:
        raise ValueError(f"L must be >= 0, got {L}")
    inv_freq = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(base) / d_model))
    ang = torch.outer(torch.arange(L).float(), inv_freq)
    out = torch.empty(L, d_model)
    out[:, ::2].copy_(ang.sin())
    out[:, 1::2].copy_(ang.cos())
    return out
# %% cell: is_permutation_equivariant
def is_permutation_equivariant(layer, x, perm, atol=1e-5):
    """Undo the permutation on both sides."""
    perm = torch.as_tensor(list(perm))
    inv = torch.argsort(perm)
    with torch.no_grad():
        y = layer(x[:, perm])[:, inv]
        return bool(((y - layer(x)).abs() <= atol).all())
