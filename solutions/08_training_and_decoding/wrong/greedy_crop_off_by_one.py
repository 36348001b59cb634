# breaks: test_greedy_decode
# mistake: context_not_block_size
# %% cell: greedy_decode
@torch.no_grad()
def greedy_decode(model, idx, n):
    """Greedy."""
    block_size = model.config.block_size
    for _ in range(n):
        logits, _ = model(idx[:, -(block_size - 1):])
        next_id = logits[:, -1, :].argmax(dim=-1)
        idx = torch.cat([idx, next_id[:, None]], dim=1)
    return idx
