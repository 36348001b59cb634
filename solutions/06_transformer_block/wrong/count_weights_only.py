# breaks: test_count_parameters
# mistake: params_without_bias
# count_parameters counts the weight of every Linear, Embedding and LayerNorm, never a bias.
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Counts the weight of every layer that has one."""
    if not isinstance(module, nn.Module):
        raise TypeError("need an nn.Module")
    seen, total = set(), 0
    for m in module.modules():
        if not isinstance(m, (nn.Linear, nn.Embedding, nn.LayerNorm)):
            continue
        w = m.weight
        if id(w) not in seen and (w.requires_grad or not trainable_only):
            seen.add(id(w))
            total += w.numel()
    return total
