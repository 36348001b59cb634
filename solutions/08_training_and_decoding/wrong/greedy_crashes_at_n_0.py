# breaks: test_greedy_decode
# The new tokens are collected in a list and stacked at the end: with n = 0 (allowed: "n >= 0") there is
# nothing to stack and torch.stack raises instead of returning the prompt.
# %% cell: greedy_decode
@torch.no_grad()
def greedy_decode(model, idx, n):
    """Greedy decoding, new tokens stacked at the end."""
    block_size = model.config.block_size
    seq, new = idx, []
    for _ in range(n):
        logits, _ = model(seq[:, -block_size:])
        nxt = logits[:, -1, :].argmax(dim=-1)
        new.append(nxt)
        seq = torch.cat([seq, nxt[:, None]], dim=1)
    return torch.cat([idx, torch.stack(new, dim=1)], dim=1)
