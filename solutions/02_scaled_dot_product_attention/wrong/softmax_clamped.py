# breaks: test_softmax
# mistake: scores_clamped
# %% cell: softmax
def softmax(x, dim=-1):
    """Clamp against overflow."""
    e = torch.exp(torch.clamp(x, max=80.0))
    return e / e.sum(dim=dim, keepdim=True)
