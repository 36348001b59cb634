# softmax computed in float64 on the axis moved last, then moved back and cast.
# %% cell: softmax
def softmax(x, dim=-1):
    """movedim."""
    y = x.double().movedim(dim, -1)
    y = y - y.max(-1, keepdim=True)[0]
    p = y.exp() / y.exp().sum(-1, keepdim=True)
    return p.movedim(-1, dim).to(x.dtype)
