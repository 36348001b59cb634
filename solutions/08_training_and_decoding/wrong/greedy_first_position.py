# breaks: test_greedy_decode
# mistake: next_token_from_first_position
# %% cell: greedy_decode
@torch.no_grad()
def greedy_decode(model, idx, n):
    """Greedy."""
    block_size = model.config.block_size
    for _ in range(n):
        logits, _ = model(idx[:, -block_size:])
        next_id = logits[:, 0, :].argmax(dim=-1)
        idx = torch.cat([idx, next_id[:, None]], dim=1)
    return idx
