# breaks: test_softmax, test_sdpa
# mistake: missing_broadcast_axes
# The row sums lose their axis (no keepdim): they broadcast against the wrong axis unless dim is the first.
# %% cell: softmax
def softmax(x, dim=-1):
    """No keepdim."""
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim)
