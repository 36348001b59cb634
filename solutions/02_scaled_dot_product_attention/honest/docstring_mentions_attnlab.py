# A docstring that mentions attnlab (the library the course compares against).
# %% cell: softmax
def softmax(x, dim=-1):
    """Same result as attnlab's reference softmax, written by hand."""
    m = x.amax(dim=dim, keepdim=True)
    e = (x - m).exp()
    return e / e.sum(dim=dim, keepdim=True)
