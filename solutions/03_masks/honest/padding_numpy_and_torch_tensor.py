# padding_mask with numpy comparisons then torch.from_numpy; sees_future with additive noise and a seed.
# %% cell: padding_mask
def padding_mask(lengths, S):
    """numpy."""
    n = np.asarray([int(v) for v in lengths])
    return torch.from_numpy(np.arange(S)[None, :] < n[:, None])
# %% cell: sees_future
def sees_future(attention, L=6, d_model=4, t=2):
    """Add noise to the future."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, L, d_model, generator=g)
    noise = torch.zeros_like(x)
    noise[:, t + 1:] = torch.randn(3, L - t - 1, d_model, generator=g)
    a, b = attention(x), attention(x + noise)
    return not torch.allclose(a[:, :t + 1], b[:, :t + 1])
