# breaks: test_train_step, test_training_run
# mistake: no_zero_grad
# %% cell: train_step
def train_step(model, optimizer, x, y, grad_clip=1.0):
    """Step."""
    _, loss = model(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return loss.item()
