# breaks: test_attention_scores, test_sdpa
# mistake: transpose_fixed_axes
# k.transpose(1, 2) swaps the right axes only for 3-D inputs; with a head axis (B, H, S, d_k) it mixes heads and keys.
# %% cell: attention_scores
def attention_scores(q, k):
    """Scores with a fixed-axis transpose."""
    return q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
