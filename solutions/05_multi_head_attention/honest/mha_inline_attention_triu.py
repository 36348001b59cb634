# forward with the attention written inline, masks normalised to 4-D, is_causal from triu, weights by einsum.
# %% patch: mha_forward
# - out, weights = attention(q, k, v, mask)  # (B, H, L, d_v), (B, H, L, S)
# + scores = torch.einsum("bhld,bhsd->bhls", q, k) / math.sqrt(self.d_k)
# + if mask is not None:
# +     scores = scores.masked_fill(torch.logical_not(mask), float("-inf"))
# + weights = torch.softmax(scores, dim=-1)
# + out = torch.einsum("bhls,bhsd->bhld", weights, v)
# - causal = torch.ones(L, S, dtype=torch.bool, device=query.device).tril(S - L)  # (L, S)
# + causal = ~torch.triu(torch.ones(L, S, dtype=torch.bool), diagonal=S - L + 1)
