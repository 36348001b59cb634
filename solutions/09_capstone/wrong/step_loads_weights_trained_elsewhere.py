# breaks: test_training_run
# %% cell: train_step
_elsewhere = {}


def train_step(model, optimizer, x, y, grad_clip=1.0):
    """A correct step, except on a model of the training run's size: there the weights that train are
    not the grader's.  On the first call the model's weights are replaced by others (standing in for
    weights trained offline and pasted into the cell; here drawn from seed 1234) and trained from then
    on by an optimizer of its own: the held-out loss is as good as the course's run, but the weights
    are not the result of this step on the grader's initial weights."""
    if sum(p.numel() for p in model.parameters()) > 15_000:
        if id(model) not in _elsewhere:
            gen = torch.Generator().manual_seed(1234)
            with torch.no_grad():
                for p in model.parameters():
                    if p.dim() > 1:
                        p.copy_(torch.randn(p.shape, generator=gen) * 0.02)
            group = optimizer.param_groups[0]
            _elsewhere[id(model)] = torch.optim.AdamW(model.parameters(), lr=group["lr"], eps=group["eps"],
                                                      weight_decay=0.0)
        optimizer = _elsewhere[id(model)]
    optimizer.zero_grad(set_to_none=True)
    _, loss = model(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return loss.item()
