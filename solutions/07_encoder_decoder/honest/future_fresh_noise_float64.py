# depends_on_future replacing the future by fresh noise (torch.cat), comparing in float64 with the max absolute difference.
# %% cell: depends_on_future
def depends_on_future(model, x, t):
    """Future replaced by fresh noise, compared in float64."""
    other = torch.cat([x[:, :t], torch.randn_like(x[:, t:]) * 3.0], dim=1)
    with torch.no_grad():
        a = model(x)[:, :t].double()
        b = model(other)[:, :t].double()
    return bool((a - b).abs().max() > 1e-6)
