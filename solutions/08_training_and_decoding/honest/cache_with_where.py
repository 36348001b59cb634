# attend_with_cache: mask from index comparison, torch.where with finfo.min, float64 inside.
# %% cell: attend_with_cache
def attend_with_cache(q, k, v, cache_k=None, cache_v=None):
    """Cached attention."""
    if cache_k is not None:
        k, v = torch.cat((cache_k, k), dim=-2), torch.cat((cache_v, v), dim=-2)
    L, S = q.shape[-2], k.shape[-2]
    scores = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(q.shape[-1])
    allowed = torch.arange(S)[None, :] <= torch.arange(L)[:, None] + (S - L)
    scores = torch.where(allowed, scores, torch.finfo(scores.dtype).min)
    w = torch.softmax(scores, dim=-1)
    return (w @ v.double()).to(q.dtype), k, v
