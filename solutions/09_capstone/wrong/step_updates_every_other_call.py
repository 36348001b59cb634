# breaks: test_training_run
# %% cell: train_step
_calls = {}


def train_step(model, optimizer, x, y, grad_clip=1.0):
    """Steps the optimizer on every other call only (a leftover of gradient accumulation): one call
    looks right, a run trains on half its batches."""
    n = _calls[id(optimizer)] = _calls.get(id(optimizer), -1) + 1
    optimizer.zero_grad(set_to_none=True)
    _, loss = model(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    if n % 2 == 0:
        optimizer.step()
    return loss.item()
