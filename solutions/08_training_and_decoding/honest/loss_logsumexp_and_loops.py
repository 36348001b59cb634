# next_token_loss through logsumexp; shift_targets by narrow; greedy with argmax keepdim.
# %% cell: next_token_loss
def next_token_loss(logits, targets):
    """mean of logsumexp - picked logit."""
    picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return (torch.logsumexp(logits, dim=-1) - picked).mean()
# %% cell: shift_targets
def shift_targets(idx):
    """narrow."""
    T = idx.shape[1] - 1
    return idx.narrow(1, 0, T), idx.narrow(1, 1, T)
# %% cell: greedy_decode
def greedy_decode(model, idx, n):
    """Greedy with no_grad as a context."""
    with torch.no_grad():
        for _ in range(n):
            logits, _ = model(idx[:, -model.config.block_size:])
            idx = torch.cat((idx, torch.argmax(logits[:, -1, :], dim=-1, keepdim=True)), dim=-1)
    return idx
# %% cell: cache_bytes_by_hand
n_bytes = "{answer}"
