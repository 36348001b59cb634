# breaks: test_softmax, test_sdpa
# mistake: softmax_inf_not_zero
# Replaces -inf by 0 "to avoid inf - inf": a blocked entry then gets the weight of a score of 0,
# where the contract gives it probability exactly 0 (and the masked scores of attention need that).
# %% cell: softmax
def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Stable softmax that first removes infinities."""
    x = torch.where(torch.isinf(x), torch.zeros_like(x), x)
    e = (x - x.max(dim=dim, keepdim=True).values).exp()
    return e / e.sum(dim=dim, keepdim=True)
