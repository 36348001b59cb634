# breaks: test_attend_with_cache
# mistake: kv_cache_prepends
# %% cell: attend_with_cache
def attend_with_cache(q, k, v, cache_k=None, cache_v=None):
    """Cached attention."""
    k_all = k if cache_k is None else torch.cat([k, cache_k], dim=2)
    v_all = v if cache_v is None else torch.cat([v, cache_v], dim=2)
    L_new, S = q.shape[2], k_all.shape[2]
    scores = q @ k_all.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~torch.ones(L_new, S, dtype=torch.bool).tril(diagonal=S - L_new), float('-inf'))
    return scores.softmax(dim=-1) @ v_all, k_all, v_all
