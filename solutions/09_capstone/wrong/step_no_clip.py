# breaks: test_train_step
# mistake: no_grad_clipping
# %% cell: train_step
def train_step(model, optimizer, x, y, grad_clip=1.0):
    """Step."""
    optimizer.zero_grad()
    _, loss = model(x, y)
    loss.backward()
    optimizer.step()
    return loss.item()
