# A leftover line setting an attribute of the student's own function.
# %% cell: softmax
def softmax(x, dim=-1):
    """Stable softmax."""
    e = (x - x.max(dim=dim, keepdim=True).values).exp()
    return e / e.sum(dim=dim, keepdim=True)


softmax.tested = True  # leftover from experimenting
