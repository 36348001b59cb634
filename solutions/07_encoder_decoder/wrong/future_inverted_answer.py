# breaks: test_depends_on_future
# mistake: leak_probe_inverted_answer
# %% cell: depends_on_future
def depends_on_future(model, x, t):
    """Perturbation test."""
    changed = x.clone()
    changed[:, t:] += torch.randn_like(changed[:, t:])
    with torch.no_grad():
        return torch.allclose(model(x)[:, :t], model(changed)[:, :t], atol=1e-6)
