# breaks: test_next_token_loss
# %% cell: next_token_loss
def next_token_loss(logits, targets):
    """Loss."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
