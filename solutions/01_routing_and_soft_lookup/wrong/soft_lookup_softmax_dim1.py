# breaks: test_soft_lookup
# mistake: softmax_wrong_axis
# %% cell: soft_lookup
def soft_lookup(query, keys, values, temperature=1.0):
    """Soft lookup with a fixed softmax axis."""
    scores = apply_temperature(torch.matmul(query, keys.transpose(-2, -1)), temperature)
    weights = F.softmax(scores, dim=1)
    return weights @ values, weights
