# breaks: test_top_p_filter
# mistake: top_p_excludes_crossing
# %% cell: top_p_filter
def top_p_filter(logits, p):
    """Top-p."""
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(dim=-1)
    drop_sorted = probs.cumsum(-1) > p
    return logits.masked_fill(drop_sorted.scatter(-1, order, drop_sorted), float('-inf'))
