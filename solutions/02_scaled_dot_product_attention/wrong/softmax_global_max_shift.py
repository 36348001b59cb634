# breaks: test_softmax
# mistake: softmax_max_shift_global
# %% cell: softmax
def softmax(x, dim=-1):
    """Shift by the global maximum."""
    e = torch.exp(x - x.max())
    return e / e.sum(dim=dim, keepdim=True)
