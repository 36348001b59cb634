# breaks: test_attention_scores, test_sdpa
# mistake: scale_by_dk
# %% cell: attention_scores
def attention_scores(q: Tensor, k: Tensor) -> Tensor:
    """Scaled attention logits."""
    return q @ k.transpose(-2, -1) / q.shape[-1]
