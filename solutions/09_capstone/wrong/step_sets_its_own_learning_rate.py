# breaks: test_train_step, test_training_run
# %% cell: train_step
def train_step(model, optimizer, x, y, grad_clip=1.0):
    """Overrides the optimizer's learning rate with a 'safer' one of its own."""
    for group in optimizer.param_groups:
        group["lr"] = 3e-3
    optimizer.zero_grad(set_to_none=True)
    _, loss = model(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return loss.item()
