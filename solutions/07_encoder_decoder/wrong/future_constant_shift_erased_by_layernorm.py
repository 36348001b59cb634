# breaks: test_depends_on_future
# mistake: leak_probe_constant_shift
# %% cell: depends_on_future
def depends_on_future(model, x, t):
    """Perturbation test."""
    changed = x.clone()
    changed[:, t:] += 1.0
    with torch.no_grad():
        return not torch.allclose(model(x)[:, :t], model(changed)[:, :t], atol=1e-6)
