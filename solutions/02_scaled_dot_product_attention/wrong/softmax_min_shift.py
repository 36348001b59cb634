# breaks: test_softmax, test_sdpa
# %% cell: softmax
def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Shifted by the minimum, not the maximum: exact in real arithmetic, overflows when a slice spans
    more than about 88 (float32) or 710 (float64)."""
    e = (x - x.min(dim=dim, keepdim=True).values).exp()
    return e / e.sum(dim=dim, keepdim=True)
