# top_p_filter on sorted probabilities: the 'cumsum > p' mask shifted right by one (the crossing token kept).
# %% cell: top_p_filter
def top_p_filter(logits, p):
    """Cumulative mass shifted right by one."""
    if not 0 < p <= 1:
        raise ValueError("p in (0, 1]")
    probs = torch.softmax(logits, dim=-1)
    sp, idx = torch.sort(probs, dim=-1, descending=True)
    cum = torch.cumsum(sp, dim=-1)
    remove = cum > p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    mask = torch.zeros_like(remove).scatter(-1, idx, remove)
    return logits.masked_fill(mask, float("-inf"))
