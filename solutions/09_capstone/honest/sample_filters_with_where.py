# sample_next_token with the filters written with torch.where and scatter_ into an empty tensor.
# %% cell: sample_next_token
def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, greedy=False, generator=None):
    """Filters written on the logits with torch.where, sorted once."""
    if greedy:
        return torch.argmax(logits, dim=-1)
    z = logits / temperature
    neg = torch.full_like(z, float("-inf"))
    if top_k is not None:
        k = min(top_k, z.shape[-1])
        z = torch.where(z >= torch.topk(z, k, dim=-1).values[:, -1:], z, neg)
    if top_p is not None:
        s, i = torch.sort(z, dim=-1, descending=True)
        pr = torch.softmax(s, dim=-1)
        before = torch.cumsum(pr, dim=-1) - pr
        s = torch.where(before >= top_p, torch.full_like(s, float("-inf")), s)
        z = torch.empty_like(z).scatter_(-1, i, s)
    return torch.multinomial(torch.softmax(z, dim=-1), 1, generator=generator)[:, 0]
