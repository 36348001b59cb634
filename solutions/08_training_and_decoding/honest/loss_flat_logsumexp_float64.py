# next_token_loss flattened, log-sum-exp by hand in float64, gathered by advanced indexing.
# %% cell: next_token_loss
def next_token_loss(logits, targets):
    """Flattened, log-sum-exp in float64."""
    V = logits.shape[-1]
    z = logits.reshape(-1, V).double()
    t = targets.reshape(-1)
    lse = z.max(-1).values + (z - z.max(-1, keepdim=True).values).exp().sum(-1).log()
    return (lse - z[torch.arange(len(t)), t]).mean().float()
