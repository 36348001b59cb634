# breaks: test_mha_forward
# mistake: fixed_size_mask_buffer
# The causal mask is sliced from a 64 x 64 buffer (like a block size): sequences longer than 64 fail.
# %% patch: mha_forward
# - causal = torch.ones(L, S, dtype=torch.bool, device=query.device).tril(S - L)  # (L, S)
# + causal = torch.ones(64, 64, dtype=torch.bool).tril()[S - L:S, :S]
