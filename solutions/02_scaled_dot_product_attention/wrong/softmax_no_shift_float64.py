# breaks: test_softmax
# mistake: softmax_no_max_shift
# exp() without the max shift, in float64: overflows above about 709.
# %% cell: softmax
def softmax(x, dim=-1):
    """float64, no shift."""
    e = x.double().exp()
    return (e / e.sum(dim=dim, keepdim=True)).to(x.dtype)
