# soft_lookup with log-softmax through logsumexp and the temperature as a multiplier 1/T; hard_lookup as the T -> 0 limit via a helper.
# %% cell: soft_lookup
def soft_lookup(query, keys, values, temperature=1.0):
    """logsumexp."""
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    s = torch.einsum("...id,...jd->...ij", query, keys) * (1.0 / temperature)
    w = torch.exp(s - torch.logsumexp(s, dim=-1, keepdim=True))
    return w @ values, w
# %% added
def _one_hot_best(scores):
    """One-hot of the row maximum."""
    return (scores == scores.amax(dim=-1, keepdim=True)).to(scores.dtype)
# %% cell: hard_lookup
def hard_lookup(query, keys, values):
    """One-hot of the best key."""
    return _one_hot_best(query @ keys.transpose(-2, -1)) @ values
