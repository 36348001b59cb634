# breaks: test_sample_next_token
# mistake: top_k_not_clamped
# top_k is passed to topk as given: a top_k larger than the vocabulary raises instead of keeping every token.
# %% patch: sample_next_token
# - kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1).values[..., -1:]  # (B, 1)
# + kth = logits.topk(top_k, dim=-1).values[..., -1:]  # (B, 1)
