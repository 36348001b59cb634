# breaks: test_mha_forward
# mistake: fixed_size_mask_buffer
# The causal mask is sliced from a fixed 16 x 16 buffer: sequences longer than 16 fail.
# %% patch: mha_forward
# - causal = torch.ones(L, S, dtype=torch.bool, device=query.device).tril(S - L)  # (L, S)
# + causal = torch.ones(16, 16, dtype=torch.bool).tril()[S - L:S, :S]
