# breaks: test_train_step, test_training_run
# mistake: target_shift_two
# The loss computed by the step itself with the targets shifted once more: the model learns the token after next.
# %% cell: train_step
def train_step(model, optimizer, x, y, grad_clip=1.0):
    """Own loss, targets shifted once more (the batch's y is already the next token)."""
    optimizer.zero_grad()
    logits, _ = model(x)
    V = logits.shape[-1]
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), y[:, 1:].reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return loss.item()
