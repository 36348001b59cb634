# breaks: test_sample_next_token
# The threshold is the first dropped logit, index top_k of the sorted row, guarded for top_k > V only:
# at top_k = V exactly (nothing to drop) the index is out of range.
# %% patch: sample_next_token
# - kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1).values[..., -1:]  # (B, 1)
# + if top_k <= logits.shape[-1]:
# +     first_dropped = logits.sort(dim=-1, descending=True).values[:, top_k:top_k + 1]  # (B, 1)
# +     logits = logits.masked_fill(logits <= first_dropped, float("-inf"))
# - logits = logits.masked_fill(logits < kth, float("-inf"))
# +
