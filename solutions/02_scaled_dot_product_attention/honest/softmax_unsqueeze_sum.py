# softmax with amax / sum without keepdim, axes restored by unsqueeze; scores with .mT and ** -0.5.
# %% cell: softmax
def softmax(x, dim=-1):
    """unsqueeze."""
    e = torch.exp(x - torch.amax(x, dim=dim).unsqueeze(dim))
    return e / torch.sum(e, dim=dim).unsqueeze(dim)
# %% cell: attention_scores
def attention_scores(q, k):
    """mT."""
    return torch.matmul(q, k.mT) * q.size(-1) ** -0.5
