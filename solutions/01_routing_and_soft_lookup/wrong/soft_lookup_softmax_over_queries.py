# breaks: test_soft_lookup
# mistake: softmax_wrong_axis
# %% cell: soft_lookup
def soft_lookup(query, keys, values, temperature=1.0):
    """Soft lookup."""
    s = apply_temperature(query @ keys.transpose(-2, -1), temperature)
    w = torch.softmax(s, dim=-2)
    return w @ values, w
