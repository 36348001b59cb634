# breaks: test_attention_scores, test_sdpa
# mistake: scale_by_wrong_axis
# %% cell: attention_scores
def attention_scores(q, k):
    """Scaled by the wrong axis."""
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-2])
