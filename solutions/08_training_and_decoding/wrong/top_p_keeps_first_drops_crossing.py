# breaks: test_top_p_filter
# mistake: top_p_excludes_crossing
# top_p_filter keeps tokens while the cumulative mass stays within p (the crossing token dropped), at least the first.
# %% cell: top_p_filter
def top_p_filter(logits, p):
    """Keeps tokens while the cumulative mass stays within p (at least one)."""
    if not 0 < p <= 1:
        raise ValueError("p in (0, 1]")
    sl, order = logits.sort(dim=-1, descending=True)
    drop = sl.softmax(-1).cumsum(-1) > p
    drop[..., 0] = False
    return logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
