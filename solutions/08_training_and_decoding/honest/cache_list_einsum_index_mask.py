# attend_with_cache with a list of cache pieces, einsum, a mask from positions S - L .. S - 1 and a -1e9 fill.
# %% cell: attend_with_cache
def attend_with_cache(q, k, v, cache_k=None, cache_v=None):
    """Cache as a list of pieces; mask from index arithmetic; einsum."""
    ks = ([] if cache_k is None else [cache_k]) + [k]
    vs = ([] if cache_v is None else [cache_v]) + [v]
    k_all, v_all = torch.cat(ks, dim=-2), torch.cat(vs, dim=-2)
    L, S = q.shape[-2], k_all.shape[-2]
    s = torch.einsum("bhld,bhsd->bhls", q, k_all) / q.shape[-1] ** 0.5
    qpos = torch.arange(S - L, S)[:, None]
    s = s.masked_fill(torch.arange(S)[None, :] > qpos, -1e9)
    return torch.einsum("bhls,bhsd->bhld", s.softmax(-1), v_all), k_all, v_all
