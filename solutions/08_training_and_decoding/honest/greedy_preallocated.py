# greedy_decode writing into a preallocated (B, T + n) tensor, max(...).indices.
# %% cell: greedy_decode
def greedy_decode(model, idx, n):
    """Pre-allocated output."""
    T = idx.shape[1]
    out = torch.zeros(idx.shape[0], T + n, dtype=torch.long)
    out[:, :T] = idx
    bs = model.config.block_size
    for i in range(T, T + n):
        ctx = out[:, max(0, i - bs):i]
        logits = model(ctx)[0]
        out[:, i] = logits[:, -1].max(dim=-1).indices
    return out
