# breaks: test_top_p_filter
# mistake: top_p_left_sorted
# %% cell: top_p_filter
def top_p_filter(logits, p):
    """Top-p."""
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(dim=-1)
    drop = (probs.cumsum(-1) - probs) >= p
    return logits.masked_fill(drop, float('-inf'))
