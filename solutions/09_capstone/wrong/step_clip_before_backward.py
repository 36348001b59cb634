# breaks: test_train_step
# mistake: train_step_order
# %% cell: train_step
def train_step(model, optimizer, x, y, grad_clip=1.0):
    """Step."""
    optimizer.zero_grad()
    _, loss = model(x, y)
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    loss.backward()
    optimizer.step()
    return loss.item()
