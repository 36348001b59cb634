# breaks: test_sinusoidal_encoding
# mistake: pe_odd_d_model_not_checked
# %% cell: sinusoidal_encoding
def sinusoidal_encoding(L, d_model, base=10000.0, device=None):
    """PE table."""
    pos = torch.arange(L, dtype=torch.float32)[:, None]
    ang = pos / base ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    t = torch.zeros(L, d_model)
    t[:, 0::2] = torch.sin(ang)
    t[:, 1::2] = torch.cos(ang[:, : d_model // 2])
    return t
