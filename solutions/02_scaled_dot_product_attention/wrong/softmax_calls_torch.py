# breaks: test_softmax
# %% cell: softmax
def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Softmax along dim."""
    return torch.softmax(x, dim=dim)
