# Masks combined with torch.logical_and, blocked logits set with -1e9, causal mask from arange.
# %% patch: mha_forward
# - scores = scores.masked_fill(~mask, float("-inf"))
# + scores = scores.masked_fill(~mask, -1e9)
# - mask = pad if mask is None else mask & pad
# + mask = pad if mask is None else torch.logical_and(mask, pad)
# - causal = torch.ones(L, S, dtype=torch.bool, device=query.device).tril(S - L)  # (L, S)
# + causal = torch.arange(S)[None, :] <= torch.arange(L)[:, None] + (S - L)
