# soft_lookup in float64 inside (amax, no keepdim then unsqueeze), cast back; hard_lookup with max().indices and take_along_dim.
# %% cell: soft_lookup
def soft_lookup(query, keys, values, temperature=1.0):
    """float64 inside."""
    s = torch.matmul(query.double(), keys.double().transpose(-1, -2))
    s = apply_temperature(s, temperature)
    s = s - s.amax(dim=-1).unsqueeze(-1)
    e = torch.exp(s)
    w = e / torch.sum(e, dim=-1).unsqueeze(-1)
    return (w @ values.double()).to(query.dtype), w.to(query.dtype)
# %% cell: hard_lookup
def hard_lookup(query, keys, values):
    """take_along_dim."""
    scores = query @ keys.transpose(-2, -1)
    best = scores.max(dim=-1).indices  # (..., L)
    lead = torch.broadcast_shapes(best.shape[:-1], values.shape[:-2])
    vals = values.expand(*lead, *values.shape[-2:])
    return torch.take_along_dim(vals, best.expand(*lead, best.shape[-1])[..., None], dim=-2)
