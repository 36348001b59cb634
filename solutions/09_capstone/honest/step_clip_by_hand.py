# train_step clearing gradients by hand and clipping the global norm by hand.
# %% cell: train_step
def train_step(model, optimizer, x, y, grad_clip=1.0):
    """Clip by hand: the global norm over all gradients."""
    for p in model.parameters():
        p.grad = None
    logits, loss = model(x, y)
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    total = torch.sqrt(sum((g.double() ** 2).sum() for g in grads))
    scale = min(1.0, grad_clip / (float(total) + 1e-6))
    for g in grads:
        g.mul_(scale)
    optimizer.step()
    return float(loss.detach())
