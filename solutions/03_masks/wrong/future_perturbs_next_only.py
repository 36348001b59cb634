# breaks: test_sees_future
# mistake: leak_probe_one_position
# Only the next position t + 1 is perturbed: a peek further ahead goes unseen.
# %% cell: sees_future
def sees_future(attention, L=6, d_model=4, t=2):
    """Perturb t + 1."""
    x = torch.randn(2, L, d_model)
    y = x.clone()
    y[:, t + 1] = torch.randn(2, d_model)
    return not torch.allclose(attention(x)[:, : t + 1], attention(y)[:, : t + 1], atol=1e-6)
