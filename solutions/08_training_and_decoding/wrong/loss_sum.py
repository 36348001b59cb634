# breaks: test_next_token_loss
# mistake: loss_summed
# %% cell: next_token_loss
def next_token_loss(logits, targets):
    """Loss."""
    lp = logits.log_softmax(-1)
    return -lp.gather(-1, targets[..., None]).sum()
