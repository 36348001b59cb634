# breaks: test_sample_next_token
# mistake: top_p_before_temperature
# %% cell: sample_next_token
def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, greedy=False, generator=None):
    """Sample."""
    if greedy:
        return logits.argmax(dim=-1)
    if top_p is not None:
        s, order = logits.sort(dim=-1, descending=True)
        ps = s.softmax(dim=-1)
        drop = ps.cumsum(dim=-1) - ps >= top_p
        logits = logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
    logits = logits / temperature
    if top_k is not None:
        kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.multinomial(logits.softmax(dim=-1), num_samples=1, generator=generator).squeeze(-1)
