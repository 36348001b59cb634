# sees_future perturbing with randn_like under no_grad, comparing with a max difference.
# %% cell: sees_future
def sees_future(attention, L=6, d_model=4, t=2):
    """Perturb the future, compare the past."""
    x = torch.randn(2, L, d_model)
    y = x.clone()
    y[:, t + 1:] = torch.randn_like(y[:, t + 1:])
    with torch.no_grad():
        past_before = attention(x)[:, :t + 1]
        past_after = attention(y)[:, :t + 1]
    return bool((past_before - past_after).abs().max() > 1e-6)
