# breaks: test_softmax
# mistake: softmax_ignores_dim
# %% cell: softmax
def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Softmax along dim."""
    e = (x - x.max(dim=-1, keepdim=True).values).exp()
    return e / e.sum(dim=-1, keepdim=True)
