# depends_on_future perturbing the future with noise, position by position, comparing the past with equal().
# %% cell: depends_on_future
def depends_on_future(model, x, t):
    """Perturb every future position, compare the past."""
    y = x.detach().clone()
    for pos in range(t, x.shape[1]):
        y[:, pos] = y[:, pos] + 1.0 + torch.randn_like(y[:, pos])
    with torch.no_grad():
        a = model(x)[:, :t]
        b = model(y)[:, :t]
    return not bool(((a - b).abs() <= 1e-6).all())
