# breaks: test_sample_next_token
# mistake: top_p_before_top_k
# sample_next_token applies top-p to the full distribution before top-k.
# %% cell: sample_next_token
def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, greedy=False, generator=None):
    """Top-p first, then top-k."""
    if greedy:
        return logits.argmax(dim=-1)
    logits = logits / temperature
    if top_p is not None:
        s, order = logits.sort(dim=-1, descending=True)
        pr = s.softmax(-1)
        drop = pr.cumsum(-1) - pr >= top_p
        logits = logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
    if top_k is not None:
        kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.multinomial(logits.softmax(-1), 1, generator=generator).squeeze(-1)
