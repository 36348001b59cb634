# get_batch with slices and stack; train_step clearing gradients through the model; by-hand loss as a string.
# %% cell: get_batch
def get_batch(data, block_size, batch_size, generator=None):
    """Stack of windows."""
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    x = torch.stack([data[s:s + block_size] for s in starts.tolist()])
    y = torch.stack([data[s + 1:s + 1 + block_size] for s in starts.tolist()])
    return x.to(torch.long), y.to(torch.long)
# %% cell: train_step
def train_step(model, optimizer, x, y, grad_clip=1.0):
    """Gradients cleared through the model."""
    model.zero_grad(set_to_none=True)
    logits, loss = model(x, y)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=grad_clip)
    optimizer.step()
    return float(loss.detach())
# %% cell: uniform_by_hand
start_loss = "{answer}"
