# breaks: test_next_token_loss
# mistake: loss_last_position_only
# %% cell: next_token_loss
def next_token_loss(logits, targets):
    """Loss."""
    lp = logits[:, -1].log_softmax(-1)
    return -lp.gather(-1, targets[:, -1:]).mean()
