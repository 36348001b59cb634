# breaks: test_next_token_loss
# mistake: loss_probabilities_not_log
# %% cell: next_token_loss
def next_token_loss(logits, targets):
    """Loss."""
    p = logits.softmax(-1)
    return -p.gather(-1, targets[..., None]).mean()
