# breaks: test_softmax, test_sdpa
# mistake: softmax_wrong_axis
# %% cell: softmax
def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Softmax along dim."""
    e = (x - x.max(dim=0, keepdim=True).values).exp()
    return e / e.sum(dim=0, keepdim=True)
