# breaks: test_attention_scores, test_sdpa
# mistake: scale_by_wrong_axis
# %% cell: attention_scores
def attention_scores(q, k):
    """d_k read from a fixed axis."""
    d_k = k.size(1) if k.dim() > 2 else k.size(-1)
    return torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
