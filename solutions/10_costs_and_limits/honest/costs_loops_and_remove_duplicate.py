# Costs with loops and a per-head sum; count_parameters deduplicating named_parameters(remove_duplicate=False) by id.
# %% cell: attention_score_bytes
def attention_score_bytes(B, H, L, dtype_bytes):
    """Entries times bytes."""
    n = 1
    for s in (B, H, L, L):
        n *= s
    return int(n * dtype_bytes)
# %% cell: mha_flops
def mha_flops(B, L, S, d_model, n_heads):
    """Per head, summed."""
    d_k = d_model // n_heads
    mm = lambda m, k, n: 2 * m * k * n
    total = mm(B * L, d_model, d_model) * 2 + mm(B * S, d_model, d_model) * 2
    for _ in range(n_heads):
        total += B * (mm(L, d_k, S) + mm(L, S, d_k))
    return total
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Unique by id over named_parameters(remove_duplicate=False)."""
    if not isinstance(module, nn.Module):
        raise TypeError("count_parameters needs an nn.Module")
    seen = {}
    for _, p in module.named_parameters(remove_duplicate=False):
        seen[id(p)] = p
    return sum(p.numel() for p in seen.values() if p.requires_grad or not trainable_only)
