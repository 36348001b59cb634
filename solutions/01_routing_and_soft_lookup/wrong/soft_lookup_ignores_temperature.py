# breaks: test_soft_lookup
# mistake: temperature_ignored
# %% cell: soft_lookup
def soft_lookup(query, keys, values, temperature=1.0):
    """Soft lookup."""
    w = torch.softmax(query @ keys.transpose(-2, -1), dim=-1)
    return w @ values, w
