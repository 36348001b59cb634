# softmax through logsumexp (stable, no torch.softmax).
# %% cell: softmax
def softmax(x, dim=-1):
    """exp(x - logsumexp(x))."""
    return torch.exp(x - torch.logsumexp(x, dim=dim, keepdim=True))
