# block_forward with explicit branches; count_parameters deduplicating by identity; formula count expanded.
# %% cell: block_forward
def block_forward(x, self_attn, ffn, norm1, norm2, norm_first):
    """Two residual sublayers."""
    if norm_first:
        attn_out, _ = self_attn(norm1(x))
        x = x + attn_out
        return x + ffn(norm2(x))
    attn_out, _ = self_attn(x)
    x = norm1(x + attn_out)
    return norm2(x + ffn(x))
# %% cell: count_parameters
def count_parameters(module, trainable_only=False):
    """Unique parameters by id."""
    if not isinstance(module, nn.Module):
        raise TypeError("count_parameters needs an nn.Module")
    seen, total = set(), 0
    for p in module.parameters():
        if id(p) in seen or (trainable_only and not p.requires_grad):
            continue
        seen.add(id(p))
        total += p.numel()
    return total
# %% cell: count_block_parameters
def count_block_parameters(d_model, n_heads, d_ff, bias=True):
    """Expanded formula."""
    b = 1 if bias else 0
    return 4 * (d_model * d_model + b * d_model) + d_model * d_ff + b * d_ff + d_ff * d_model + b * d_model \
        + 2 * (d_model + b * d_model)
# %% cell: layernorm_by_hand
ln_out = "{answer}"
