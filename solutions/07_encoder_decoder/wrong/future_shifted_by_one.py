# breaks: test_depends_on_future
# mistake: leak_probe_shifted_by_one
# depends_on_future perturbs positions t + 1 .. and compares 0 .. t: the question for t + 1.
# %% cell: depends_on_future
def depends_on_future(model, x, t):
    """Perturbs after t, compares up to t."""
    changed = x.clone()
    changed[:, t + 1:] += 1.0 + torch.randn_like(changed[:, t + 1:])
    with torch.no_grad():
        a, b = model(x), model(changed)
    return not torch.allclose(a[:, :t + 1], b[:, :t + 1], atol=1e-6)
