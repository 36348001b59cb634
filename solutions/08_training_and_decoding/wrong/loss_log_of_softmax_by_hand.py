# breaks: test_next_token_loss
# %% cell: next_token_loss
def next_token_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Cross-entropy with a hand-written softmax and no shift: exp() overflows for logits above 88."""
    B, T, V = logits.shape
    e = logits.reshape(B * T, V).exp()
    p = e / e.sum(dim=-1, keepdim=True)
    return -p.log().gather(1, targets.reshape(-1, 1)).mean()
