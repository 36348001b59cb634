# breaks: test_sees_future
# mistake: leak_probe_always_leaky
# %% cell: sees_future
def sees_future(attention, L=6, d_model=4, t=2):
    """Perturbation test."""
    x = torch.randn(2, L, d_model)
    changed = x.clone()
    changed[:, t + 1:] = torch.randn(2, L - t - 1, d_model)
    before, after = attention(x), attention(changed)
    return not torch.allclose(before, after, atol=1e-6)
