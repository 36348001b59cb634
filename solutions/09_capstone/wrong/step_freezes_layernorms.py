# breaks: test_train_step, test_training_run
# %% cell: train_step
def train_step(model, optimizer, x, y, grad_clip=1.0):
    """Leaves the LayerNorms' gains and biases out of the update ('they start at 1 and 0 anyway')."""
    optimizer.zero_grad(set_to_none=True)
    _, loss = model(x, y)
    loss.backward()
    for name, p in model.named_parameters():
        if "norm" in name or "ln" in name:
            p.grad = None
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return loss.item()
