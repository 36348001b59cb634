# breaks: test_mha_forward
# mistake: causal_kv_misaligned
# is_causal builds tril() anchored at the top-left: wrong when S > L (cached or longer keys).
# %% patch: mha_forward
# - causal = torch.ones(L, S, dtype=torch.bool, device=query.device).tril(S - L)  # (L, S)
# + causal = torch.ones(L, S, dtype=torch.bool, device=query.device).tril()
