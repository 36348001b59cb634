# breaks: test_depends_on_future
# mistake: leak_probe_compares_t
# %% cell: depends_on_future
def depends_on_future(model, x, t):
    """Perturbation test."""
    changed = x.clone()
    changed[:, t:] += torch.randn_like(changed[:, t:])
    with torch.no_grad():
        return not torch.allclose(model(x)[:, :t + 1], model(changed)[:, :t + 1], atol=1e-6)
