# breaks: test_soft_lookup
# %% cell: soft_lookup
def soft_lookup(query, keys, values, temperature=1.0):
    """Soft lookup."""
    q = query * math.sqrt(query.shape[-1]) / temperature
    w = torch.softmax(apply_temperature(query @ keys.transpose(-2, -1), temperature), dim=-1)
    return F.scaled_dot_product_attention(q, keys, values), w
