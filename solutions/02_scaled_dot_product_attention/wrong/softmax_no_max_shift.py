# breaks: test_softmax
# mistake: softmax_no_max_shift
# %% cell: softmax
def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Softmax along dim."""
    e = x.exp()
    return e / e.sum(dim=dim, keepdim=True)
