# breaks: test_sees_future
# mistake: leak_probe_one_position
# %% cell: sees_future
def sees_future(attention, L=6, d_model=4, t=2):
    """Perturbation test."""
    x = torch.randn(2, L, d_model)
    changed = x.clone()
    changed[:, -1] = torch.randn(2, d_model)
    before, after = attention(x)[:, : t + 1], attention(changed)[:, : t + 1]
    return not torch.allclose(before, after, atol=1e-6)
