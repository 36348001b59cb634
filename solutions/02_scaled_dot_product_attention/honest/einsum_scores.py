# attention_scores with einsum over any leading axes.
# %% cell: attention_scores
def attention_scores(q, k):
    """Q K^T / sqrt(d_k) with einsum."""
    return torch.einsum("...ld,...sd->...ls", q, k) / q.shape[-1] ** 0.5
