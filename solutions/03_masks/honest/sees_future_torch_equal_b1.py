# sees_future with a batch of one, d_model from the argument, exact comparison with torch.equal.
# %% cell: sees_future
def sees_future(attention, L=6, d_model=4, t=2):
    """torch.equal."""
    x = torch.randn(1, L, d_model)
    y = torch.cat([x[:, : t + 1], torch.randn(1, L - t - 1, d_model)], dim=1)
    return not torch.equal(attention(x)[:, : t + 1], attention(y)[:, : t + 1])
