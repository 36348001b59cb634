# A helper defined in a cell the student added above the answer cell, plus exploration code.
# %% added
def _shifted_exp(x, dim):
    """exp(x - max) along dim."""
    return (x - x.max(dim=dim, keepdim=True).values).exp()

print(_shifted_exp(torch.zeros(2), 0))
# %% cell: softmax
def softmax(x, dim=-1):
    """Softmax from a helper."""
    e = _shifted_exp(x, dim)
    return e / e.sum(dim=dim, keepdim=True)
