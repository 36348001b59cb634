# A local variable named `input` (shadows the builtin, harmless).
# %% cell: softmax
def softmax(x, dim=-1):
    """Softmax with a variable named input."""
    input = x - x.max(dim=dim, keepdim=True).values
    e = input.exp()
    return e / e.sum(dim=dim, keepdim=True)
