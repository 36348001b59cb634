# breaks: test_depends_on_future
# mistake: input_modified_in_place
# depends_on_future perturbs the caller's x in place (the answers are right, x comes back changed).
# %% cell: depends_on_future
def depends_on_future(model, x, t):
    """Perturbs the caller's tensor in place."""
    with torch.no_grad():
        before = model(x)
        x[:, t:] += 1.0 + torch.randn_like(x[:, t:])
        after = model(x)
    return not torch.allclose(before[:, :t], after[:, :t], atol=1e-6)
