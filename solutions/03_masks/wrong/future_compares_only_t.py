# breaks: test_sees_future
# mistake: leak_probe_one_output
# Only the output at position t is compared: a leak into an earlier position goes unseen.
# %% cell: sees_future
def sees_future(attention, L=6, d_model=4, t=2):
    """Compare position t."""
    x = torch.randn(2, L, d_model)
    y = x.clone()
    y[:, t + 1:] = torch.randn(2, L - t - 1, d_model)
    return not torch.allclose(attention(x)[:, t], attention(y)[:, t], atol=1e-6)
