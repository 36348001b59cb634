# softmax with a tiny epsilon in the denominator and [0] indexing of max.
# %% cell: softmax
def softmax(x, dim=-1):
    """eps."""
    e = torch.exp(x - torch.max(x, dim, keepdim=True)[0])
    return e / (e.sum(dim, keepdim=True) + 1e-12)
