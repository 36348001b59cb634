# breaks: test_attention_scores, test_sdpa
# mistake: qt_k
# %% cell: attention_scores
def attention_scores(q: Tensor, k: Tensor) -> Tensor:
    """Scaled attention logits."""
    return (q.transpose(-2, -1) @ k).transpose(-2, -1) / math.sqrt(q.shape[-1])
